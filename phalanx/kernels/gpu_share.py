"""GPU-share Filter (the device-level GPU check of the main Scheduler, sched/gpushare.py): status codes and
reasons over all nodes at once, built on kernels/gpu_fit.py (device_fits is the per-device test).

Inputs are the dense (N, D) views of the GpuTable (GpuTable.dense_free / dense_model): free milli-GPU per device
slot (padding and unhealthy devices 0) and model id per slot (-1 padding). A node passes when at least `count`
of its devices of an allowed model have `milli` free (gpu_fit.gpu_fit_filter). Devices that whole-GPU pods
hold are shown with 0 free (without_whole_devices).
"""
from __future__ import annotations

from ..cluster_models.gpus import MILLI
from .gpu_fit import device_fits, model_match
from .status import UNSCHEDULABLE

NO_ALLOWED_MODEL_BIT = 1     # payload: the node has no GPU of an allowed model (or no GPU at all)
INSUFFICIENT_BIT = 2         # payload: it has some, but fewer than `count` with `milli` free
REASONS = {NO_ALLOWED_MODEL_BIT: "node(s) had no GPU of an allowed model", INSUFFICIENT_BIT: "Insufficient GPU share"}


def without_whole_devices(xp, free, whole):
    """(N, D) free milli with, on each node n, its whole[n] lowest-index idle devices (free == MILLI) set to 0: the
    devices whole-GPU (nvidia.com/gpu) pods hold (sched/gpushare.py). whole: (N,) int64; a node with fewer
    idle devices than whole[n] (an over-committed input) has all of them held."""
    idle = free == MILLI
    rank = xp.cumsum(idle.astype(xp.int64), axis=1)
    return xp.where(idle & (rank <= whole[:, None]), 0, free)


def allowed_devices(xp, dev_model, n_devices, allowed):
    """(N,) int64 devices of an allowed model per node, unhealthy ones included (`allowed`: tuple of model ids, or
    None for any; slots beyond n_devices (N,) are padding). It moves only with the devices themselves (node events),
    so callers keep it."""
    valid = xp.arange(dev_model.shape[1], dtype=xp.int64)[None, :] < n_devices[:, None]
    return (valid if allowed is None else valid & model_match(xp, dev_model, allowed)).sum(axis=1)


def share_failure(xp, present, count: int):
    """What each node reports when fewer than `count` of its devices fit: (code (N,) int8, payload (N,) int64), from
    its allowed_devices `present` (N,) int64 (a device of unknown model has model id -1 like padding). A node with no
    device of an allowed model reports NO_ALLOWED_MODEL_BIT (unhealthy devices count as present: they report
    INSUFFICIENT_BIT), any other INSUFFICIENT_BIT. A node with fewer than `count` devices of an allowed model fails
    UnschedulableAndUnresolvable, as NodeResourcesFit does for a request above allocatable: removing pods
    (preemption) cannot make it fit. It moves only with the devices (node events), so callers keep it."""
    code = (UNSCHEDULABLE + (present < count)).astype(xp.int8)
    return code, (NO_ALLOWED_MODEL_BIT + (present > 0)).astype(xp.int64)


def gpu_share_filter(xp, free, dev_model, failure, count: int, milli: int, allowed):
    """(code (N,) int8, payload (N,) int64): success where at least `count` devices of an allowed model have `milli`
    free, else the node's share_failure (`failure`: its (code, payload)). `allowed`: tuple of model ids, or None for
    any. Products with the failed mask rather than where() (a few rows per call on the kept-shape path, where numpy's
    per-call cost is the whole cost): SUCCESS and payload 0 where it fits."""
    return _failures(device_fits(xp, free, dev_model, milli, allowed).sum(axis=1) < count, failure)


def ranked_share_filter(failure, ranked, milli: int):
    """gpu_share_filter of a pod that names no model, from `ranked` (N,) int64: each node's count-th most free device
    slot (GpuBook.ranked_free): `count` devices have `milli` free where that one has. Fewer operations on the few
    rows of a kept-shape update."""
    return _failures(ranked < milli, failure)


def _failures(failed, failure):
    code, payload = failure
    return failed * code, failed * payload
