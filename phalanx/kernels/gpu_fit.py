"""Device-level GPU filter and device selection, vectorised over all nodes and their devices.

Devices are a dense (N, D) view of the GpuTable (GpuTable.dense_free / dense_model): `free` is the free milli-GPU
of each device slot (0..1000; padding slots and unhealthy devices are 0), `dev_model` its model id (-1 padding).

The filter is the trace simulator's Open-Gpu-Share Filter (pkg/type/open-gpu-share/cache/gpunodeinfo.go
AllocateGpuId) for the requests phalanx accepts (whole GPUs of 1000 milli, or a fraction of one GPU): a node fits
when at least `count` of its devices of an allowed model have `milli` free. The model test is per device (the
simulator tests the node's one model; the same for single-model nodes).
"""
from __future__ import annotations

ANY_MODEL = None   # `allowed` for a pod without a model restriction
NO_MODEL = -2      # stands for a requested model name that no device has: never matches


def allowed_ids(models: tuple, names) -> tuple | None:
    """Host side: the model ids of the allowed model names (None: any model). An unknown name is NO_MODEL."""
    names = tuple(n for n in names if n)
    if not names:
        return ANY_MODEL
    return tuple(models.index(n) if n in models else NO_MODEL for n in names)


def model_match(xp, dev_model, allowed):
    """(N, D) bool: the device slot is of a model in `allowed` (a tuple of model ids, not None)."""
    match = xp.zeros(dev_model.shape, dtype=bool)
    for m in allowed:
        match = match | (dev_model == m)
    return match


def device_fits(xp, free, dev_model, milli: int, allowed):
    """(N, D) bool: the device has `milli` free and is of an allowed model. `allowed`: tuple of model ids or None."""
    ok = free >= milli
    return ok if allowed is None else ok & model_match(xp, dev_model, allowed)


def gpu_fit_filter(xp, free, dev_model, count: int, milli: int, allowed):
    """(N,) bool: at least `count` devices fit. A pod without GPUs (count 0) fits every node."""
    if count == 0:
        return xp.ones(free.shape[:1], dtype=bool)
    return xp.sum(device_fits(xp, free, dev_model, milli, allowed), axis=1) >= count


def select_devices(xp, free, fits, count: int, order: str = "best"):
    """(N, D) bool: the `count` devices a pod gets on each node, among `fits`.

    best: least free milli first (tightest fit), lower device index on ties -- the simulator's default GPU
    selection (allocateGpuIdBasedOnBestFit; for whole GPUs, AllocateExclusiveGpuId: the lowest-index idle devices,
    which is the same order since every fitting device is idle) and NodeResource.Sub's packing order.
    worst: most free milli first, lower index on ties (allocateGpuIdBasedOnWorstFit).
    A node with fewer than `count` fitting devices gets all of them (callers filter first)."""
    d = free.shape[1]
    idx = xp.arange(d, dtype=xp.int64)
    primary = free if order == "best" else 1000 - free
    big = (1001 * d + d)
    key = xp.where(fits, primary * d + idx[None, :], big)
    rank = xp.argsort(xp.argsort(key, axis=1), axis=1)
    return fits & (rank < count)


def random_device(xp, fits, u):
    """(N, D) bool: one fitting device per node, uniformly: the floor(u * fitting)-th in index order.
    u: (N,) float64 in [0, 1) (the simulator's allocateGpuIdBasedOnRandomFit, reservoir sampling: uniform)."""
    cnt = xp.sum(fits, axis=1)
    k = xp.floor(u * cnt).astype(xp.int64)
    pos = xp.cumsum(fits.astype(xp.int64), axis=1) - 1
    return fits & (pos == k[:, None])
