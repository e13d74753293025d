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
- resident on the device between calls: the padded node table (fixed columns and the load state), its
  per-resource columns (allocatable, requested, nonzero_requested) stored resource-major, (R, N): a pod's cycle
  reads a few resources of every node, and node-major rows put every resource of a node on the cache line a
  column read touches (Heterogeneous_5000Nodes_10000Pods: 81 -> 44 us per pod of compiled loop). The load
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
import functools
import os
import pickle
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..cluster_models import Pod
from ..cluster_models.tensors import padded_rows, stacked
from ..kernels.backend import BackendUnavailable, namespace, precision, to_host
from ..kernels.resource_allocation import pod_amounts
from ..plugins.framework import PER_POD, Pads, PodInfo
from .cluster import Cluster
from .cycle import Evaluation, Prepared, batchable, prepare
from .device_program import compiled_loop, pad, run_program, runtime_names, static_prepared
from .framework import Framework
from .placement import Placement, Placer, RunOutcome, SegmentOutcome, rejectors
from .shapes import PodShape

CHUNK = 1024          # most pods placed pod by pod in one compiled call; longer runs take several calls
BATCH_CHUNK = 16384   # most pods placed in batch rounds by one compiled call
SEGMENT_PODS = 8192   # most pods of a segment (runs of different shapes placed by chained compiled calls)
CALL_PODS = 512       # most pods of a segment one compiled call places
SEGMENT_RUN = 16      # longer runs are placed on their own (batch rounds)
# XLA:CPU vectorises loops at 256 bits unless told otherwise. The node loops of the program are elementwise (their
# lanes never mix: every reduction over nodes is an integer max or sum), so wider vectors change no result, and on
# AVX-512 they run faster (Heterogeneous_5000Nodes_10000Pods: 44 -> 31 us per pod of compiled loop on Zen 4); LLVM
# caps the width at what the CPU has.
COMPILER_OPTIONS = {"xla_cpu_prefer_vector_width": "512"}


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
    compiles: int = 0          # XLA programs compiled (one per pod shape and bucket); CuPy: plugin states copied
    compile_s: float = 0.0     # time spent tracing and compiling them (CuPy: copying those states)
    calls: int = 0             # compiled calls made
    run_s: float = 0.0         # time in compiled calls, copying inputs in and results out (not table uploads)
    uploads: int = 0           # node-table copies to the device (the table stays there between calls)
    segments: int = 0          # compiled calls that placed runs of several shapes (place_segment)
    syncs: int = 0             # CuPy: stop flags fetched inside a call (besides each call's summary)


def bucket(x: int, lo: int = 8) -> int:
    """Padded size for x: at least lo, then four steps per doubling (at most 25% padding)."""
    if x <= lo:
        return lo
    step = 1 << max(0, (x - 1).bit_length() - 3)       # (x - 1).bit_length(): ceil(log2(x)), in integers
    return -(-x // step) * step


def pow2(x: int, lo: int = 8) -> int:
    return max(lo, 1 << (max(x, 1) - 1).bit_length())


@dataclass
class _Resident:
    """The node table padded on the device: fixed columns, and the load state the compiled calls update."""
    owners: tuple        # the host objects it was copied from (held, so their ids cannot be reused)
    pads: tuple          # (n_pad, r_pad, kl_pad, t_pad, p_pad)
    fixed: dict          # allocatable, allowed_pods, unschedulable, labels, taints
    state: dict = None   # requested, nonzero_requested, pod_count, host_ports (donated to each call)
    mark: int = 0        # len(tensors.changes) when state last equalled the host table


@dataclass
class _Pending:
    """A compiled call dispatched and maybe still running (JAX runs it asynchronously)."""
    res: tuple                       # run_program's results (device arrays; res[3]: the link a call chained
                                     # after it starts from)
    sampling: bool                   # the call samples nodes (its next start is kept)


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


_UNKNOWN = object()     # SegmentMember.family not made yet


@dataclass
class SegmentMember:
    """A run ready to join a segment: its cycle state split into the compiled configuration and its amounts."""
    shape: PodShape
    pods: list[Pod]
    pod: PodInfo                     # its pod as PreFilter reads it (requests over the resource columns)
    prepared: Prepared | None        # its cycle state; None for a member of the head's family (_family_member)
    static: Prepared                 # prepared without its amounts, padded (what the program compiles in)
    runtime: dict[str, np.ndarray] | None  # its amounts: one int64 vector per plugin (static_prepared); None: the
                                           # head's family, its amounts gathered from its amount vector (sources)
    ports: tuple[int, ...]           # its host-port columns
    pads: tuple[Pads, int]           # the buckets `static` is padded to (Pads, label keys padded)
    # the head's _Family, made when a run first asks to join it (None: some plugin that reads requests gives no
    # sources, so its family's runs are prepared like any other)
    family: "_Family | None | object" = dataclasses.field(default=_UNKNOWN, repr=False)

    @functools.cached_property
    def joining(self) -> tuple:
        """What _amounts_joining compares later members with, made once: the frame, the states (_states) and the
        static states in runtime order."""
        static = self.static
        return (_frame(self.prepared), _states(self.prepared),
                [s for _, s in static.filters] + [s for _, s, _ in static.scores])

    def amounts(self, head: "SegmentMember") -> dict[str, np.ndarray]:
        """Its run-time amounts in the head's configuration: its own, or those of the head's family."""
        if self.runtime is not None:
            return self.runtime
        vector = pod_amounts(pad(self.pod.request, (head.pads[0].resources,), 0), self.shape.nonzero,
                             self.shape.scoring)
        return {name: rows[0] for name, rows in _gathered(head, vector[None]).items()}


@dataclass(frozen=True)
class _Family:
    """A segment head's family (PodShape.family). A run of it whose pods have the head's Plugin.request_pattern at
    every plugin of the profile that reads requests gets the head's results everywhere, and states that differ from
    the head's in their amounts alone: its amount vector (pod_amounts) gathered at `sources`."""
    name: str                                 # the head shape's family (PodShape.family)
    width: int                                # the head's request columns
    patterns: tuple                           # (plugin, its request_pattern of the head's pod)
    sources: dict[str, np.ndarray]            # run-time input name -> sources, for the plugins that read requests


# The extension points whose plugins make a Prepared (sched/cycle.py prepare).
_PREPARED_POINTS = ("preFilter", "filter", "preScore", "score")


def _states(p: Prepared) -> list:
    """The state of each filter, then each score: _static_prepared's order of run-time inputs."""
    return [state for _, state in p.filters] + [state for _, state, _ in p.scores]


def _split(p: Prepared, i: int, pads: Pads):
    """(static part, amounts) of the i-th state of _states(p), padded, as _static_prepared splits it."""
    if i < len(p.filters):
        plugin, state = p.filters[i]
        return plugin.runtime_filter_inputs(plugin.pad_filter_state(state, pads))
    plugin, state, _ = p.scores[i - len(p.filters)]
    return plugin.runtime_score_inputs(plugin.pad_score_state(state, pads))


def _frame(p: Prepared) -> tuple:
    """p's configuration besides its plugins' states and allowed nodes: plugins (equal by type and args), weights
    (with their types, since 1 == True), narrowing and skips."""
    return (tuple(plugin for plugin, _ in p.filters), tuple((plugin, type(w), w) for plugin, _, w in p.scores),
            p.narrowing, p.skipped)


def _same_array(a, b) -> bool:
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
            and a.tobytes() == b.tobytes())


def _gathered(head: SegmentMember, vectors: np.ndarray) -> dict[str, np.ndarray]:
    """The run-time amounts of pods of the head's family, from their amount vectors ((k, R + 5), pod_amounts): for
    each plugin that reads requests the vectors gathered at its sources, the head's for any other."""
    sources = head.family.sources
    return {name: vectors[:, sources[name]] if name in sources else np.broadcast_to(amounts, (len(vectors),)
                                                                                     + amounts.shape)
            for name, amounts in head.runtime.items()}


def _family(head: SegmentMember, cluster, framework) -> _Family | None:
    """head's _Family on the cluster now (SegmentMember.family)."""
    p, pads = head.prepared, head.pads[0]
    sources = {}
    filter_names, score_names = runtime_names(p)
    for name, (plugin, state) in zip(filter_names, p.filters):
        if plugin.reads_requests:
            sources[name] = plugin.runtime_filter_sources(plugin.pad_filter_state(state, pads), cluster)
    for name, (plugin, state, _) in zip(score_names, p.scores):
        if plugin.reads_requests:
            sources[name] = plugin.runtime_score_sources(plugin.pad_score_state(state, pads), cluster)
    if any(v is None for v in sources.values()):
        return None
    readers = dict.fromkeys(plugin for point in _PREPARED_POINTS for plugin in framework.at(point)
                            if plugin.reads_requests)
    return _Family(head.shape.family, len(p.request),
                   tuple((plugin, plugin.request_pattern(p.pod, cluster)) for plugin in readers), sources)


def _amounts_joining(p: Prepared, head: SegmentMember, pads: Pads) -> dict[str, np.ndarray] | None:
    """p's run-time amounts (as _static_prepared splits them) when its static configuration equals the head member's,
    else None. Exact, and cheaper than comparing every member's padded states whole (which cost more than its
    PreFilter): a state identical to the head's unpadded one, or an array equal to it, has the head's padded parts
    (padding and the split are functions of the state); any other is padded and split, and its static part compared
    with the head's (_same_static)."""
    frame, their_states, statics = head.joining
    if _frame(p) != frame or not (p.allowed is head.prepared.allowed or _same_array(p.allowed, head.prepared.allowed)):
        return None
    runtime = {}
    for i, ((name, their_amounts), their_state, static, state) in enumerate(zip(
            head.runtime.items(), their_states, statics, _states(p))):
        if state is their_state or _same_array(state, their_state):
            runtime[name] = their_amounts
            continue
        mine, amounts = _split(p, i, pads)
        if amounts.shape != their_amounts.shape or not _same_static(mine, static):
            return None
        runtime[name] = amounts
    return runtime


# Values compared by == (with their types: 1 == True == 1.0 are different configurations).
_PLAIN = frozenset({int, str, bool, bytes, type(None)})


def _same_static(a, b) -> bool:
    """Whether two static parts of plugin states are one configuration: arrays by dtype, shape and bytes; tuples,
    lists and dataclasses item by item (their fields); ints, strings, bools, bytes and None by == with their
    types; anything else (floats among them: -0.0 == 0.0) by its pickle."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _PLAIN:
        return a == b
    if kind is np.ndarray:
        return _same_array(a, b)
    if kind is tuple or kind is list:
        if len(a) != len(b):
            return False
    elif (names := _field_names(kind)) is not None:
        a, b = [getattr(a, name) for name in names], [getattr(b, name) for name in names]
    else:
        return pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL) == pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL)
    for x, y in zip(a, b):
        if x is not y and not _same_static(x, y):
            return False
    return True


@functools.lru_cache(maxsize=None)
def _field_names(kind: type) -> tuple[str, ...] | None:
    """A dataclass's field names, None for any other type."""
    return tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None


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
            # Filter counts): the per-pod path, eagerly on self.xp's arrays (JAX's; numpy's for CupyPlacer).
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
        pp, runtime = static_prepared(p, pads)
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
            state["bound_node"] = pad(bound.node.astype(np.int32), (m_pad,), -1)
            state["bound_namespace"] = pad(bound.namespace.astype(np.int32), (m_pad,), -2)
            state["bound_labels"] = pad(bound.labels, (m_pad, kp_pad), -1)
            state["bound_terminating"] = pad(bound.terminating, (m_pad,), False)
            per_call["own"] = np.concatenate([pad(own, (kp_pad,), -1).astype(np.int64),
                                            np.array([ns, bound.count], np.int64)])
        # Amounts are run-time inputs (only which columns are asked for is compiled in), so pods that differ only
        # in their requests share one program.
        per_call["request"] = np.stack([pad(p.request, (pads.resources,), 0),
                                        pad(shape.nonzero, (pads.resources,), 0)])
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

    def _account(self, p: Prepared | PodInfo, own_ports: list, node_ids: np.ndarray, pods: list[Pod],
                 placed: list) -> None:
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
        return self._collect(self._dispatch(static, pads, kl_pad, rank, k, per_call, state))

    def _dispatch(self, static: tuple, pads: Pads, kl_pad: int, rank: np.ndarray, k: int, per_call: dict,
                  state: dict, after: "_Pending | None" = None) -> "_Pending":
        """Start the compiled program for `static` on the resident table, without waiting for it. `after`: the call
        before it, still running, whose stop it inherits (placing nothing when that call stopped at a pod) and whose
        node sampling it continues."""
        n = self.cluster.tensors.nodes.size
        resident = self._resident_nodes(pads, kl_pad)
        wanted = self.nodes_to_find(n)
        # rank: a permutation of the nodes (Scheduler.rank), the padded nodes last; by_rank: its inverse
        padded_rank = np.concatenate([np.asarray(rank, np.int64), np.arange(n, pads.nodes, dtype=np.int64)])
        by_rank = np.empty_like(padded_rank)
        by_rank[padded_rank] = np.arange(pads.nodes, dtype=np.int64)
        per_call = {"rank": padded_rank, "by_rank": by_rank,
                    "scalars": np.array([n, wanted, k], np.int64), **per_call}
        # The per-call inputs (all int64) travel as one array: one explicit copy per call, unpacked by layout.
        layout = tuple((name, v.shape) for name, v in per_call.items())
        link = after.res[3] if after is not None else np.array([1, self.next_start], np.int64)
        arrays = {**resident.fixed, "packed": np.concatenate([v.ravel() for v in per_call.values()]), "link": link}
        static = static + (layout,)
        state = {**resident.state, **state}
        program = self._program(pickle.dumps(static), static, arrays, state)
        t0 = time.perf_counter()
        with precision(self.xp):
            # Explicit copies of the per-call inputs (the resident table is already there): nothing a compiled
            # run moves is implicit (tests/test_backend_scheduler.py runs such schedules under
            # jax.transfer_guard). The eager per-pod paths (claims, GPU shares, explain) still convert host arrays.
            host = {name: v for name, v in {**arrays, **state}.items() if isinstance(v, np.ndarray)}
            moved = self._put(host)
            arrays.update((name, v) for name, v in moved.items() if name in arrays)
            state.update((name, v) for name, v in moved.items() if name in state)
            res = self._execute(program, arrays, state, k)
            resident.state = {name: res[-1][name] for name in resident.state}     # the donated buffers' successors
        self.stats.calls += 1
        self.stats.run_s += time.perf_counter() - t0
        return _Pending(res, static[1])

    def _collect(self, pending: "_Pending") -> "_CallResult":
        """Wait for a dispatched call and copy back what it did: its summary (counters, then the chosen nodes), and
        the failed pod's Filter codes when one failed."""
        t0 = time.perf_counter()
        with precision(self.xp):
            summary = self._get(pending.res[0])
            placed, failed, prescore, next_start, rounds = (int(x) for x in summary[:5])
            codes, payloads = self._get((pending.res[1], pending.res[2])) if failed else (None, None)
        self.stats.run_s += time.perf_counter() - t0
        if pending.sampling:
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
        framework = self.framework
        if head is not None:
            member = self._family_member(shape, pods, head, ports)
            if member is not None:
                return member
        p = prepare(shape, cluster, framework)
        if not self._compiles(p) or _reads_bound_pods(p):
            return None
        # Per member, not once per segment: a member's port columns or PreFilter may grow a vocabulary.
        pads, kl_pad, _ = self._pads()
        if head is None:
            static, runtime = static_prepared(p, pads)
        else:
            if (ports, (pads, kl_pad), p.score_error is None) != (head.ports, head.pads,
                                                                   head.prepared.score_error is None):
                return None
            static, runtime = head.static, _amounts_joining(p, head, pads)
            if runtime is None:
                return None
        return SegmentMember(shape, pods, p.pod, p, static, runtime, ports, (pads, kl_pad))

    def _family_member(self, shape: PodShape, pods: list[Pod], head: SegmentMember, ports: tuple
                       ) -> SegmentMember | None:
        """The run as a member of the head's family (_Family), not prepared, or None when it is not one. Nothing is
        bound while a segment is formed, so the head's results still hold on the cluster."""
        cluster, framework = self.cluster, self.framework
        if head.family is _UNKNOWN:
            head.family = _family(head, cluster, framework)
        fam = head.family
        if fam is None or shape.family != fam.name:
            return None
        pod = PodInfo(shape, shape.request_vector(cluster.tensors))
        if len(pod.request) != fam.width or any(plugin.request_pattern(pod, cluster) != theirs
                                                for plugin, theirs in fam.patterns):
            return None
        return SegmentMember(shape, pods, pod, None, head.static, None, ports, head.pads)

    def place_segment(self, members: Iterable[SegmentMember], rank: np.ndarray) -> SegmentOutcome:
        """Place the members' pods in order, pod by pod (members joined to the first: one configuration), stopping at
        the first pod that fits nowhere. Returns each member's placements and how many pods were placed in all (each
        a pod cycle); the failed pod is left to the caller (its run's own cycle gives its message and PostFilter).

        The members come as they are made: every CALL_PODS pods or so go in one compiled call, started without
        waiting (each chained to the one before: it places nothing once one stopped), so that the next members are
        made while it runs; the calls' results are read back in order at the end. A member is not taken once a
        finished call stopped at a pod, nor while the table would have to be copied in again (a vocabulary grew):
        then the calls running are read back and accounted first."""
        members = iter(members)
        head = next(members)
        taken: list[SegmentMember] = []
        calls: list[tuple[list[SegmentMember], _Pending]] = []
        part, size = [head], len(head.pods)
        outcomes: list[list[Placement]] = []
        placed = 0
        stopped = False

        def read_back(upto: int) -> None:
            """Wait for the first `upto` calls not yet read and account what they placed."""
            nonlocal placed, stopped
            for _ in range(upto):
                part_members, pending = calls.pop(0)
                res = self._collect(pending)
                if stopped:         # chained after the call that stopped: it placed nothing
                    outcomes.extend([] for _ in part_members)
                    continue
                outcomes.extend(self._account_segment(part_members, res.node_ids[:res.placed]))
                placed += res.placed
                stopped = res.failed

        def start(part: list[SegmentMember]) -> None:
            """Dispatch the part, chained after the calls running; unless a call stopped at a pod, or a vocabulary
            grew past the head's buckets (the part then goes to its runs' own cycles)."""
            nonlocal stopped
            taken.extend(part)
            if calls and not self._resident_current(*head.pads):
                read_back(len(calls))
            if not stopped and self._pads()[:2] != head.pads:
                stopped = True
            if not stopped:
                calls.append((part, self._dispatch_segment(head, part, rank, calls[-1][1] if calls else None)))

        for m in members:
            if size + len(m.pods) > CALL_PODS:
                start(part)
                part, size = [], 0
                if calls and self._finished(calls[0][1]):
                    read_back(1)
                if stopped:
                    taken.append(m)     # made, not placed: it goes back with the members after the stop
                    break
            part.append(m)
            size += len(m.pods)
        else:
            start(part)
        read_back(len(calls))
        outcomes.extend([] for _ in range(len(taken) - len(outcomes)))
        return SegmentOutcome(outcomes, placed, pod_cycles=placed)

    def _dispatch_segment(self, head: SegmentMember, members: list[SegmentMember], rank: np.ndarray,
                          after: "_Pending | None") -> "_Pending":
        """Start one compiled call placing the members' pods (the head's configuration), chained after `after`."""
        pads, kl_pad = head.pads
        counts = [len(m.pods) for m in members]
        k = sum(counts)
        k_pad = pow2(k, lo=64)      # a few programs per configuration, whatever the segments' lengths
        # Made per member, then repeated for its pods: row i is pod i's request and non-zero requests, and its
        # amounts per plugin; rows from k on are zeros.
        request = padded_rows([m.pod.request for m in members], pads.resources)
        nonzero = stacked([m.shape.nonzero for m in members], 2)
        amounts = {name: np.empty((len(members),) + v.shape, v.dtype) for name, v in head.runtime.items()}
        gathered = [i for i, m in enumerate(members) if m.runtime is None]     # the head's family's members
        if gathered:
            scoring = stacked([members[i].shape.scoring for i in gathered], 2)
            for name, rows in _gathered(head, pod_amounts(request[gathered], nonzero[gathered], scoring)).items():
                amounts[name][gathered] = rows
        for i, m in enumerate(members):
            if m.runtime is not None:
                for name, v in m.runtime.items():
                    amounts[name][i] = v

        def rows(per_member: np.ndarray) -> np.ndarray:
            out = np.zeros((k_pad,) + per_member.shape[1:], per_member.dtype)
            out[:k] = np.repeat(per_member, counts, axis=0)
            return out

        both = np.zeros((len(members), 2, pads.resources), np.int64)
        both[:, 0], both[:, 1, :2] = request, nonzero
        per_call = {"request": rows(both), **{name: rows(v) for name, v in amounts.items()}}
        static = (head.static, self.sampling(), head.ports, kl_pad, pads.label_values,
                  head.prepared.score_error is not None, False, k_pad, False, True)
        self.stats.segments += 1
        return self._dispatch(static, pads, kl_pad, rank, k, per_call, {}, after)

    def _account_segment(self, members: list[SegmentMember], node_ids: np.ndarray) -> list[list[Placement]]:
        """The first len(node_ids) pods of the members, placed on node_ids, into the host table: each member's
        placements. The members share the head's host ports (a compiled configuration): with none, their pods are
        bound in one update of the node table; with some, pod by pod (each placement's cells, for undo)."""
        out, runs, start = [], [], 0
        for m in members:
            taken = min(max(len(node_ids) - start, 0), len(m.pods))
            ids, pods, p = node_ids[start:start + taken], m.pods[:taken], m.pod
            done: list[Placement] = []
            if m.ports:
                self._account(p, list(m.ports), ids, pods, done)
            elif taken:
                runs.append((pods, ids, p.request, p.shape.nonzero))
                done.append(Placement(pods, ids, p.request, p.shape.nonzero, [], None, p.shape.scoring))
            out.append(done)
            start += len(m.pods)
        if runs:
            self.cluster.tensors.bind_runs(runs)
            self._resident.mark = len(self.cluster.tensors.changes)
        return out

    def nodes_changed(self) -> None:
        super().nodes_changed()
        self._resident = None

    def _owners(self) -> tuple:
        """The host objects the resident table is copied from: the table is copied again when one is replaced."""
        tensors = self.cluster.tensors
        nodes = tensors.nodes
        return (tensors, nodes, nodes.allocatable, nodes.requested, nodes.nonzero_requested, nodes.pod_count,
                nodes.allowed_pods, nodes.unschedulable, nodes.labels, nodes.taints, nodes.host_ports)

    @staticmethod
    def _resident_pads(pads: Pads, kl_pad: int) -> tuple:
        return pads.nodes, pads.resources, kl_pad, pads.taints, pads.ports

    def _table_replaced(self, pads: Pads, kl_pad: int) -> bool:
        """Whether the resident table's fixed columns must be copied in again (none yet, other buckets, or a host
        array replaced: node events, vocabulary growth)."""
        r = self._resident
        return (r is None or r.pads != self._resident_pads(pads, kl_pad)
                or any(a is not b for a, b in zip(r.owners, self._owners())))

    def _resident_current(self, pads: Pads, kl_pad: int) -> bool:
        """Whether a call with these pads would find the resident table as it is (no copy in, which would read the
        host table: behind the calls still running)."""
        return not self._table_replaced(pads, kl_pad) and self._resident.mark == len(self.cluster.tensors.changes)

    def _resident_nodes(self, pads: Pads, kl_pad: int) -> "_Resident":
        """The padded node table on the device, uploaded again only when the host table changed other than by
        this placer's own calls: node events (nodes_changed), vocabulary growth (a new array object), or a load
        change recorded in tensors.changes since the last call (undo, Permit rejection, deletion, eager paths)."""
        tensors = self.cluster.tensors
        nodes = tensors.nodes
        fresh = self._table_replaced(pads, kl_pad)
        r = self._resident
        if not fresh and r.mark == len(tensors.changes):
            return r
        n_pad, r_pad, _, t_pad, p_pad = self._resident_pads(pads, kl_pad)
        put = self._put
        with precision(self.xp):
            if fresh:
                fixed = put({"allocatable": pad(nodes.allocatable, (n_pad, r_pad), 0).T.copy(),
                             "allowed_pods": pad(nodes.allowed_pods, (n_pad,), 0),
                             "unschedulable": pad(nodes.unschedulable, (n_pad,), False),
                             "labels": pad(nodes.labels, (n_pad, kl_pad), -1),
                             "taints": pad(nodes.taints, (n_pad, t_pad), -1)})
                r = self._resident = _Resident(self._owners(), self._resident_pads(pads, kl_pad), fixed)
            r.state = put({"requested": pad(nodes.requested, (n_pad, r_pad), 0).T.copy(),
                           "nonzero_requested": pad(nodes.nonzero_requested, (n_pad, 2), 0).T.copy(),
                           "pod_count": pad(nodes.pod_count, (n_pad,), 0),
                           "host_ports": pad(nodes.host_ports, (n_pad, p_pad), False)})
        self.stats.uploads += 1
        r.mark = len(tensors.changes)
        return r

    # -- what differs between backends: copies, the program and how it runs --------------------------------
    def _put(self, tree):
        """Explicit host-to-device copy of an array or a dict of arrays."""
        return self.jax.device_put(tree)

    def _get(self, tree):
        """Explicit device-to-host copy of an array or a tuple of arrays."""
        return self.jax.device_get(tree)

    def _execute(self, program, arrays: dict, state: dict, k: int):
        return program(arrays, state)

    def _finished(self, pending: "_Pending") -> bool:
        """Whether a dispatched call has finished (reading it back would not wait)."""
        return pending.res[0].is_ready()

    def _program(self, key: bytes, static: tuple, arrays: dict, state: dict):
        sig = (key, tuple((k, v.shape, v.dtype.str) for d in (arrays, state) for k, v in sorted(d.items())))
        program = PROGRAMS.get(sig)
        if program is None:
            jax = self.jax
            t0 = time.perf_counter()
            with precision(self.xp):
                fn = jax.jit(lambda a, s: run_program(self.xp, static, a, s, compiled_loop), donate_argnums=(1,))
                program = fn.lower(arrays, state).compile(COMPILER_OPTIONS if jax.default_backend() == "cpu" else None)
            self.stats.compiles += 1
            self.stats.compile_s += time.perf_counter() - t0
            PROGRAMS.put(sig, program)
        return program
