"""tests/strict_device.py, the strict CPU stand-in for CuPy: each of its rules, and a few phalanx kernels under it."""
from __future__ import annotations

import numpy as np
import pytest

from phalanx.kernels import backend, batch, select
from strict_device import DeviceArray, ImplicitSync, strict_namespace, to_host

HOST = np.arange(6, dtype=np.int64)
HOST_ERROR = "numpy.ndarray.*implicit host-to-device"


@pytest.fixture
def xp():
    return strict_namespace()


@pytest.fixture
def dev(xp):
    return xp.arange(6, dtype=xp.int64) - 2          # [-2, -1, 0, 1, 2, 3]


# -- rule 1: a module-like namespace of DeviceArrays ----------------------------------------------------------

def test_namespace_is_neither_numpy_nor_jax(xp):
    assert xp.__name__ == "strict_device"
    assert not backend.is_jax(xp) and not backend.is_numpy(xp)
    assert xp.int64 is np.int64 and xp.bool_ is np.bool_ and xp.ndarray is DeviceArray
    assert xp.iinfo(xp.int64).max == 2**63 - 1 and xp.finfo(xp.float64).eps == np.finfo(np.float64).eps


def test_functions_take_and_return_device_arrays(xp, dev):
    idx = xp.asarray([0, 2])
    outs = [xp.where(dev > 0, dev, 0), xp.zeros((3,)), xp.full((2,), 7), xp.concatenate([dev, dev]),
            xp.stack([dev, dev]), xp.take(dev, idx), xp.argsort(dev), xp.argpartition(dev, 2), xp.cumsum(dev),
            xp.searchsorted(dev, 1), xp.log(xp.abs(dev) + 1), xp.broadcast_to(dev, (2, 6)), xp.minimum(dev, 0),
            xp.argmax(dev), xp.max(dev), xp.sum(dev), xp.count_nonzero(dev), xp.array_equal(dev, dev),
            xp.add.accumulate(dev), xp.add.reduce(dev)]
    assert all(isinstance(o, DeviceArray) for o in outs)
    assert xp.argmax(dev).ndim == 0 and xp.array_equal(dev, dev).ndim == 0    # 0-d arrays, not Python values
    assert to_host(xp.where(dev > 0, dev, 0)).tolist() == [0, 0, 0, 1, 2, 3]
    assert isinstance(xp.linalg.norm(dev.astype(xp.float64)), DeviceArray)   # submodules are wrapped too


# -- rule 2: no implicit host-to-device transfer --------------------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda xp, d: xp.where(d > 0, HOST, 0),
    lambda xp, d: d + HOST,
    lambda xp, d: HOST + d,
    lambda xp, d: d == HOST,
    lambda xp, d: d[HOST],
    lambda xp, d: d.__setitem__(Ellipsis, HOST),
    lambda xp, d: xp.concatenate([d, HOST]),
    lambda xp, d: xp.sum(np.array(3)),                       # 0-d numpy arrays are arrays too
    lambda xp, d: d + np.array(3),
    lambda xp, d: xp.add.at(d, HOST[:2], 1),
], ids=["where", "dev+host", "host+dev", "dev==host", "getitem", "setitem", "concatenate", "0-d", "dev+0-d", "at"])
def test_host_arrays_are_refused(xp, dev, op):
    with pytest.raises(TypeError, match=HOST_ERROR):
        op(xp, dev)


def test_explicit_transfers_and_scalars(xp, dev):
    assert isinstance(xp.asarray(HOST), DeviceArray) and isinstance(xp.array(HOST), DeviceArray)
    assert xp.asarray(np.array(3)).ndim == 0 and xp.transfers_to_device == 3
    assert xp.shares_memory(xp.asarray(dev), dev) and xp.asarray(dev, dtype=xp.float64).dtype == np.float64
    assert xp.transfers_to_device == 3                        # a device array is not transferred
    assert to_host(dev + np.int64(3) + 1 + xp.asarray([1, 1, 1, 1, 1, 1])).tolist() == [3, 4, 5, 6, 7, 8]
    assert to_host(np.int64(1) > dev).tolist() == [True, True, True, False, False, False]   # 0-d via numpy


# -- rule 3: no implicit device-to-host conversion ------------------------------------------------------------

@pytest.mark.parametrize("op", [np.sum, np.flatnonzero, lambda d: np.where(d > 0, d, 0), lambda d: np.concatenate([d]),
                                lambda d: d.__array__()], ids=["sum", "flatnonzero", "where", "concatenate", "array"])
def test_numpy_functions_refuse_device_arrays(dev, op):
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        op(dev)


def test_explicit_device_to_host(xp, dev):
    got = dev.get()
    assert type(got) is np.ndarray and got.tolist() == [-2, -1, 0, 1, 2, 3] and xp.transfers_to_host == 1
    got[0] = 99
    assert to_host(dev)[0] == -2 and type(xp.asnumpy(dev)) is np.ndarray and xp.transfers_to_host == 3
    assert isinstance(np.add(dev, dev), DeviceArray)          # numpy ufuncs run on the device, as CuPy's do
    # The documented hole: numpy never asks an ndarray subclass, so np.asarray(dev) is a silent plain view.
    assert type(np.asarray(dev)) is np.ndarray and xp.transfers_to_host == 3


# -- rule 4: implicit synchronisation -------------------------------------------------------------------------

def _if(d):
    if d[0]:
        return 1


SYNCS = {
    "bool": lambda xp, d: bool(xp.any(d)), "int": lambda xp, d: int(d[0]), "float": lambda xp, d: float(d[0]),
    "index": lambda xp, d: d[0].__index__(), "item": lambda xp, d: d[0].item(), "tolist": lambda xp, d: d.tolist(),
    "if": lambda xp, d: _if(d), "slice bound": lambda xp, d: d[:d[3]], "range": lambda xp, d: range(d[3]),
    "format": lambda xp, d: f"{d[0]}", "nonzero": lambda xp, d: xp.nonzero(d),
    "method nonzero": lambda xp, d: d.nonzero(),
    "flatnonzero": lambda xp, d: xp.flatnonzero(d), "argwhere": lambda xp, d: xp.argwhere(d),
    "where(c)": lambda xp, d: xp.where(d > 0), "unique": lambda xp, d: xp.unique(d),
    "bincount": lambda xp, d: xp.bincount(xp.abs(d)), "mask getitem": lambda xp, d: d[d > 0],
    "mask setitem": lambda xp, d: d.copy().__setitem__(d > 0, 0), "compress": lambda xp, d: xp.compress(d > 0, d),
    "extract": lambda xp, d: xp.extract(d > 0, d), "repeat counts": lambda xp, d: xp.repeat(d, xp.abs(d)),
    "size": lambda xp, d: xp.zeros((d[3],)), "arange": lambda xp, d: xp.arange(d[3]),
}


@pytest.mark.parametrize("name", SYNCS)
def test_syncs_raise_under_no_sync_and_count_outside(xp, dev, name):
    with xp.no_sync(), pytest.raises(ImplicitSync):
        SYNCS[name](xp, dev)
    SYNCS[name](xp, dev)
    assert xp.syncs == 1


def test_metadata_and_device_work_do_not_sync(xp, dev):
    with xp.no_sync():
        assert dev.shape == (6,) and dev.dtype == np.int64 and dev.size == 6 and dev.ndim == 1 and len(dev) == 6
        for out in (dev.astype(xp.float64), dev.reshape(2, 3), dev.reshape(2, 3).T, dev.copy(), dev.sum(), dev.max(),
                    dev.min(), dev.any(), dev.all(), dev.argmax(), dev.mean(), dev.cumsum(), dev[1:3], dev[0], dev > 0,
                    dev + dev, xp.repeat(dev, 2), xp.count_nonzero(dev)):
            assert isinstance(out, DeviceArray)
        assert dev.sum().ndim == 0 and dev.argmax().ndim == 0 and dev[0].ndim == 0
        assert all(isinstance(v, DeviceArray) and v.ndim == 0 for v in dev)      # iteration yields 0-d arrays
    assert xp.syncs == 0 and repr(dev).startswith("DeviceArray(")


# -- rule 5: integer device indices ---------------------------------------------------------------------------

def test_device_integer_indexing(xp, dev):
    with xp.no_sync():
        idx = xp.asarray([0, 0, 5])
        picked = dev[idx]
        at_max = dev[xp.argmax(dev)]
        a = xp.zeros((6,), dtype=xp.int64)
        a[idx] += 1                               # buffered: the duplicate 0 adds once (numpy and CuPy alike)
        b = xp.zeros((6,), dtype=xp.int64)
        xp.add.at(b, idx, 1)                      # unbuffered: it adds twice
        m = xp.zeros((2, 3), dtype=xp.int64)
        m[xp.asarray([1]), 2] = 7
    assert isinstance(picked, DeviceArray) and to_host(picked).tolist() == [-2, -2, 3]
    assert int(at_max) == 3
    assert to_host(a).tolist() == [1, 0, 0, 0, 0, 1] and to_host(b).tolist() == [2, 0, 0, 0, 0, 1]
    assert to_host(m).tolist() == [[0, 0, 0], [0, 0, 7]]


# -- rule 6: CuPy's limits on ufunc methods -------------------------------------------------------------------

def test_ufunc_methods_cupy_lacks(xp, dev):
    for op in (lambda: xp.minimum.accumulate(dev), lambda: xp.maximum.reduce(dev), lambda: np.minimum.accumulate(dev),
               lambda: xp.multiply.reduceat(dev, xp.asarray([0, 3])), lambda: xp.power.at(dev, xp.asarray([0]), 2)):
        with pytest.raises(NotImplementedError, match="is not supported yet"):
            op()
    assert int(dev.min()) == -2 and int(xp.min(dev)) == -2                  # reductions themselves are fine
    with pytest.raises(TypeError, match="subtract.at only supports"):
        xp.subtract.at(dev, xp.asarray([0]), 1)
    assert to_host(strict_namespace(ufunc_limits=False).minimum.accumulate(xp.asarray([3, 1, 2]))).tolist() == [3, 1, 1]


def test_int64_scatter_needs_cupy_14_1(dev):
    xp13 = strict_namespace(cupy_version=(13, 6))
    d = xp13.asarray(to_host(dev))
    with pytest.raises(TypeError, match="minimum.at only supports"):
        xp13.minimum.at(d, xp13.asarray([0]), 1)
    xp13.add.at(d.astype(xp13.int32), xp13.asarray([0]), 1)              # int32 is fine there
    strict_namespace().minimum.at(d, xp13.asarray([0]), 1)                  # int64 from 14.1


# -- phalanx kernels under the strict namespace ---------------------------------------------------------------

def _both(fn, *arrays):
    """fn(np, *arrays) and fn(xp, *device arrays) under no_sync, the latter brought back to the host."""
    xp = strict_namespace()
    dev = [xp.asarray(a) for a in arrays]
    with xp.no_sync():
        got = fn(xp, *dev)
    got = tuple(to_host(g) for g in got) if isinstance(got, tuple) else to_host(got)
    return fn(np, *arrays), got


def _same(want, got):
    for w, g in zip(want, got) if isinstance(want, tuple) else [(want, got)]:
        w = np.asarray(w)
        assert w.shape == g.shape and w.dtype == g.dtype and np.array_equal(w, g), (w, g)


RNG = np.random.default_rng(3)
TOTAL = RNG.integers(0, 50, 40)
FEASIBLE = RNG.random(40) < 0.6
RANK = RNG.permutation(40).astype(np.int64)
A = RNG.integers(-100, 100, 40)
B = RNG.integers(1, 9, 40)
INDEX = RNG.integers(0, 40, 15)


@pytest.mark.parametrize("name, fn, arrays", [
    ("select_best", select.select_best, (TOTAL, FEASIBLE, RANK)),
    ("select_best none", select.select_best, (TOTAL, np.zeros(40, bool), RANK)),
    ("trunc_div", backend.trunc_div, (A, B)),
    ("score_div", backend.score_div, (A, B)),
    ("set_at", lambda xp, a, i: backend.set_at(xp, a, i, 7), (A, np.unique(INDEX))),
    ("add_at", lambda xp, a, i, v: backend.add_at(xp, a, i, v), (A, INDEX, B[:15])),
    ("min_at", lambda xp, a, i, v: backend.min_at(xp, a, i, v), (A, INDEX, -B[:15])),
    ("smallest", lambda xp, k: backend.smallest(xp, k, 5), (RNG.permutation(40),)),
    ("smallest all", lambda xp, k: backend.smallest(xp, k, 50), (RNG.permutation(40),)),
    ("sample_feasible", lambda xp, f: select.sample_feasible(xp, f, 7, 5), (FEASIBLE,)),
    ("sample_feasible among", lambda xp, f, m: select.sample_feasible(xp, f, 3, 4, among=m), (FEASIBLE, TOTAL > 20)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_kernels_match_numpy_without_syncing(name, fn, arrays):
    _same(*_both(fn, *arrays))


def test_cummin():
    """CuPy's ufunc.accumulate takes add and multiply only: backend.cummin doubles instead."""
    _same(*_both(lambda xp, a: backend.cummin(xp, a, axis=1), A.reshape(4, 10)))
    _same(*_both(lambda xp, a: backend.cummin(xp, a, axis=0), A.reshape(4, 10)))


def test_bincount():
    """CuPy's bincount reads the largest index back to size its output: backend.bincount adds at instead (indices
    outside [0, length) dropped, as numpy's bincount sliced to length drops them)."""
    _same(*_both(lambda xp, i, w: backend.bincount(xp, i, w, 12), INDEX - 3, B[:15]))


def test_min_at_needs_cupy_14_1():
    """int64 minimum.at arrived in CuPy 14.1 (batch.fill_times uses it): why pyproject pins cupy >= 14.1."""
    xp = strict_namespace(cupy_version=(13, 6))
    with pytest.raises(TypeError):
        backend.min_at(xp, xp.asarray(A), xp.asarray(INDEX), xp.asarray(-B[:15]))
    _same(*_both(lambda xp, a, i, v: backend.min_at(xp, a, i, v), A, INDEX, -B[:15]))


def test_batch_pick_order_on_the_device():
    """pick_order (cummin's first caller) stays on the device under CuPy's limits and gives numpy's picks."""
    totals, cap, rank = RNG.integers(0, 300, (6, 3)), RNG.integers(0, 4, 6), RNG.permutation(6).astype(np.int64)
    xp = strict_namespace()
    with xp.no_sync():
        got = batch.pick_order(xp, *(xp.asarray(a) for a in (totals, cap, rank)), 5)
    _same(batch.pick_order(np, totals, cap, rank, 5), tuple(to_host(g) for g in got))
