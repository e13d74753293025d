"""The placement program of the device backends: up to k pods of one prepared shape (or a segment of runs)
placed on the padded node table, stopping at the first pod that fits nowhere; pod by pod, or in batch rounds
when the shape is batchable. One function of the array namespace, run two ways (`loop`):

- JAX (sched/jax_placer.py) traces it into one XLA program: `compiled_loop` is `lax.while_loop`;
- CuPy (sched/cupy_placer.py) runs it eagerly, each step's kernels queued on the GPU's stream: `HostLoop` is a
  Python loop that fetches the stop flag (one explicit copy) only every few steps. A step after the stop leaves
  everything as it was (each update is gated by `alive`), so steps queued past it change nothing.

State updates use the backend helpers (kernels/backend.py: set_at, update_slice, bincount), functional on JAX.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..cluster_models.tensors import BoundPods
from ..kernels.backend import bincount, set_at, update_slice
from ..kernels.batch import NEVER, contenders, fill_times, normalization_epoch_end, pick_order
from ..kernels.select import sample_feasible, select_best
from ..plugins.framework import Pads, pad1
from .cycle import Prepared, copy_capacity, copy_totals, fixed_scores, run_filters, run_scores

BATCH_COPIES = 32     # further copies scored per contender in one batch round (a static shape)


class NodeArrays:
    """NodeTable's array fields (padded, on the device), as the plugins read them: (N, R) views of the resident
    resource-major (R, N) columns (sched/jax_placer.py)."""

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


def pad(a: np.ndarray, shape: tuple, fill) -> np.ndarray:
    out = np.full(shape, fill, dtype=a.dtype)
    out[tuple(slice(0, s) for s in a.shape)] = a
    return out


def runtime_names(p: Prepared) -> tuple[list[str], list[str]]:
    """The names of the run-time inputs, one per plugin: "f<i>" for the i-th filter, "s<j>" for the j-th score."""
    return [f"f{i}" for i in range(len(p.filters))], [f"s{j}" for j in range(len(p.scores))]


def static_prepared(p: Prepared, pads: Pads) -> tuple[Prepared, dict[str, np.ndarray]]:
    """p for the compiled program: every plugin state padded and stripped of its run-time amounts (returned
    apart, one int64 vector per plugin, by runtime_names), without the pod."""
    runtime = {}
    filters, scores = [], []
    filter_names, score_names = runtime_names(p)
    for name, (plugin, state) in zip(filter_names, p.filters):
        state, runtime[name] = plugin.runtime_filter_inputs(plugin.pad_filter_state(state, pads))
        filters.append((plugin, state))
    for name, (plugin, state, weight) in zip(score_names, p.scores):
        state, runtime[name] = plugin.runtime_score_inputs(plugin.pad_score_state(state, pads))
        scores.append((plugin, state, weight))
    allowed = None if p.allowed is None else pad1(p.allowed, pads.nodes, False)
    return dataclasses.replace(p, pod=None, filters=tuple(filters), scores=tuple(scores), allowed=allowed), runtime


def with_runtime(pp: Prepared, a: dict) -> Prepared:
    """Inverse of static_prepared's split, with the traced run-time amounts."""
    filter_names, score_names = runtime_names(pp)
    filters = tuple((plugin, plugin.with_runtime_filter(state, a[name]))
                    for name, (plugin, state) in zip(filter_names, pp.filters))
    scores = tuple((plugin, plugin.with_runtime_score(state, a[name]), weight)
                   for name, (plugin, state, weight) in zip(score_names, pp.scores))
    return dataclasses.replace(pp, filters=filters, scores=scores)


def compiled_loop(cond, body, carry):
    """JAX: the loop inside the compiled program."""
    from jax import lax
    return lax.while_loop(cond, body, carry)


class HostLoop:
    """An eager backend's loop: `steps` bodies at most, queued one after another; every `check_every` steps the stop
    condition comes back to the host (`fetch`: one explicit copy) and ends the loop when false. `guard`: a context
    entered around each body (a test's no-synchronisation guard)."""

    def __init__(self, steps: int, check_every: int, fetch, guard):
        self.steps, self.check_every, self.fetch, self.guard = steps, check_every, fetch, guard

    def __call__(self, cond, body, carry):
        for step in range(1, self.steps + 1):
            with self.guard():
                carry = body(carry)
                going = cond(carry) if step % self.check_every == 0 and step < self.steps else None
            if going is not None and not self.fetch(going):
                break
        return carry


def run_program(xp, static, a, s, loop):
    """Place up to k pods of one prepared shape, stopping at the first that fits nowhere; pod by pod, or in batch
    rounds when the shape is batchable. A segment: pod i's amounts are row i of the per-pod inputs. Returns
    (summary: placed, failed, prescore failed, next start, rounds, then the chosen nodes; the failed pod's Filter
    codes and payloads; the link for a call chained after it; the state)."""
    pp, sampling, own_ports, kl_pad, v_pad, prescore_possible, spread, k_pad, batch, segment, layout = static
    a, offset = dict(a), 0
    packed = a.pop("packed")
    for name, shape in layout:
        size = math.prod(shape)
        a[name] = packed[offset:offset + size].reshape(shape)
        offset += size
    n_pad = a["allocatable"].shape[1]
    runtime = [name for names in runtime_names(pp) for name in names]

    def amounts(i):
        """(request, nonzero, prepared with its amounts) of pod i."""
        if segment:
            return a["request"][i, 0], a["request"][i, 1, :2], with_runtime(pp, {name: a[name][i] for name in runtime})
        return a["request"][0], a["request"][1, :2], with_runtime(pp, a)

    request, nonzero, run_pp = amounts(0)
    n, wanted, k = (a["scalars"][i] for i in range(3))
    # The link from the call before (a device array when calls are chained, sched/jax_placer.py): whether it placed
    # all its pods (0: it stopped at one, and this call places none), and where its node sampling left off.
    go, start0 = a["link"][0] != 0, a["link"][1]
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
        nodes = NodeArrays(n_pad, a["allocatable"].T, st["requested"].T, st["nonzero_requested"].T, st["pod_count"],
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
        node = select_best(xp, ev.total, feasible, a["rank"], a["by_rank"])
        node = xp.where(prescore, -1, node)
        return (node, prescore, visited, *filter_codes(ev))

    def place(st, node, ok, i, request, nonzero):
        """The state after pod i lands on `node` when `ok`, else the state unchanged (no branch, so that an eager
        loop can queue it without knowing ok)."""
        out = dict(st)
        row = xp.where(ok, node, 0)
        for column, amount in (("requested", request), ("nonzero_requested", nonzero)):
            out[column] = written(ok, st[column], (slice(None), row), st[column][:, row] + amount)
        out["pod_count"] = written(ok, st["pod_count"], row, st["pod_count"][row] + 1)
        if own_ports:
            out["host_ports"] = written(ok, st["host_ports"], (row, port_cols), True)
        if spread:
            # Rows count.. count + k are the run's own pods (node -1 until placed).
            bound_row = row0 + xp.minimum(i, k - 1)
            out["bound_node"] = written(ok, st["bound_node"], bound_row, node.astype(xp.int32))
            out["bound_namespace"] = written(ok, st["bound_namespace"], bound_row, own_ns)
            out["bound_labels"] = written(ok, st["bound_labels"], bound_row, own_labels)
        return out

    def written(ok, array, index, value):
        """array with array[index] = value where ok, else unchanged."""
        return set_at(xp, array, index, xp.where(ok, value, array[index]))

    def cond(carry):
        i, failed = carry[0], carry[1]
        return (i < k) & ~failed

    def body(carry):
        i, failed, prescore_failed, start, nodes_out, fail_codes, fail_payloads, st, rounds = carry
        alive = cond(carry)
        request, nonzero, pp = amounts(xp.minimum(i, k - 1))
        node, prescore, visited, codes, payloads = evaluate(st, start, pp)
        if sampling:
            start = xp.where(alive, (start + visited) % n, start)
        ok = (node >= 0) & alive
        st = place(st, node, ok, i, request, nonzero)
        nodes_out = written(ok, nodes_out, xp.minimum(i, k_pad - 1), node.astype(xp.int32))
        lost = alive & ~ok
        if not segment:
            fail_codes = xp.where(lost, codes, fail_codes)
            fail_payloads = xp.where(lost, payloads, fail_payloads)
        return (xp.where(ok, i + 1, i), failed | lost, prescore_failed | (prescore & lost), start, nodes_out,
                fail_codes, fail_payloads, st, rounds + alive.astype(xp.int64))

    # Batch rounds (the numpy Placer's batch path, sched/placement.py, with fixed shapes): the contenders are the
    # c_pad best first copies, each scored for its next BATCH_COPIES copies; a round takes the picks up to the
    # first that may not follow the computed order (a normalization maximum lost, a contender's copies used up).
    c_pad = min(k_pad, n_pad)
    picks = min(k_pad, c_pad * BATCH_COPIES)
    copies = xp.arange(1, BATCH_COPIES + 1)[None, :]

    def batch_body(carry):
        i, failed, prescore_failed, start, nodes_out, fail_codes, fail_payloads, st, rounds = carry
        alive = cond(carry)
        tensors = tensors_of(st)
        ev = run_filters(xp, run_pp, tensors)
        feasible = ev.feasible & valid
        prescore = prescore_fails(feasible)
        ok = xp.any(feasible) & ~prescore & alive
        cap = xp.where(feasible, copy_capacity(xp, run_pp, tensors, k_pad), 0)
        static_total, holders = fixed_scores(xp, run_pp, tensors, feasible)

        def totals(rows, j):
            return copy_totals(xp, run_pp, tensors, rows, static_total[rows], j)

        sub = contenders(xp, totals(xp.arange(n_pad), copies[:, :1])[:, 0], a["rank"], c_pad, feasible)
        cap_sub = cap[sub]
        cap_seen = xp.minimum(cap_sub, BATCH_COPIES)
        cand, copy, count = pick_order(xp, totals(sub, copies), cap_seen, a["rank"][sub], picks)
        seen_end = fill_times(xp, cand, copy, cap_seen, c_pad, count)
        fill_t = set_at(xp, xp.full((n_pad,), NEVER, dtype=xp.int64), sub, seen_end)
        end = xp.minimum(normalization_epoch_end(xp, fill_t, holders),
                         xp.min(xp.where(cap_sub > BATCH_COPIES, seen_end, NEVER)))
        take = xp.where(ok, xp.minimum(xp.minimum(count, k - i), end + 1), 0)
        chosen = xp.where(xp.arange(picks) < take, sub[cand], -1)
        per_node = bincount(xp, chosen, xp.ones((picks,), dtype=xp.int64), n_pad)
        st = dict(st)
        st["requested"] = st["requested"] + request[:, None] * per_node[None, :]
        st["nonzero_requested"] = st["nonzero_requested"] + nonzero[:, None] * per_node[None, :]
        st["pod_count"] = st["pod_count"] + per_node
        if own_ports:
            cells = (slice(None), port_cols)
            st["host_ports"] = set_at(xp, st["host_ports"], cells, st["host_ports"][cells] | (per_node > 0)[:, None])
        nodes_out = update_slice(xp, nodes_out, i, chosen.astype(xp.int32))
        lost = alive & ~ok
        codes, payloads = filter_codes(ev)
        fail_codes = xp.where(lost, codes, fail_codes)
        fail_payloads = xp.where(lost, payloads, fail_payloads)
        return (i + take, failed | lost, prescore_failed | (prescore & lost), start, nodes_out, fail_codes,
                fail_payloads, st, rounds + alive.astype(xp.int64))

    # nodes_out has room for a whole round written at any i < k, so update_slice never has to clamp. A segment's
    # failed pod goes through its run's own cycle (place_segment): its codes are not carried (copying them at every
    # step was a third of a segment's time).
    failed_nodes = 0 if segment else n_pad
    carry = (xp.asarray(0, dtype=xp.int64), ~go, xp.asarray(False), start0,
             xp.full((k_pad + (picks if batch else 0),), -1, dtype=xp.int32),
             xp.zeros((n_filters, failed_nodes), xp.int8), xp.zeros((n_filters, failed_nodes), xp.int64), s,
             xp.asarray(0, dtype=xp.int64))
    i, failed, prescore_failed, start, nodes_out, fail_codes, fail_payloads, st, rounds = loop(
        cond, batch_body if batch else body, carry)
    summary = xp.concatenate([xp.stack([i, failed.astype(xp.int64), prescore_failed.astype(xp.int64),
                                        xp.asarray(start, dtype=xp.int64), rounds]), nodes_out.astype(xp.int64)])
    link = xp.stack([(~failed).astype(xp.int64), xp.asarray(start, dtype=xp.int64)])
    return summary, fail_codes, fail_payloads, link, st
