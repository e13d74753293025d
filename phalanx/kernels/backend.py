"""The few array operations whose spelling differs between numpy, JAX and CuPy.

Every kernel takes the array namespace `xp` explicitly; nothing here switches a global backend. Optional
backends are imported only when asked for (`import phalanx` needs numpy alone).

JAX computes in 32 bits unless 64-bit types are enabled; phalanx never flips that process-wide. Every JAX
entry point runs inside `precision(xp)`, which is `jax.enable_x64(True)` as a context manager (scoped to the
thread and the `with` block; the jit cache keys on it, so a function traced under it is never reused without).
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import math

import numpy as np

BACKENDS = ("numpy", "jax", "cupy")
CHOICES = (*BACKENDS, "auto")


class BackendUnavailable(RuntimeError):
    """The backend's package (or the device it needs) is not there; the message is one line."""


def namespace(name: str):
    """The array module for a backend name; optional backends are imported only when asked for."""
    if name == "numpy":
        return np
    if name == "jax":
        try:
            import jax.numpy
        except ImportError as exc:
            raise BackendUnavailable(f"backend 'jax' needs the jax package ({exc}); pip install 'phalanx[jax]'")
        return jax.numpy
    if name == "cupy":
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
        except ImportError as exc:
            raise BackendUnavailable(f"backend 'cupy' needs the cupy package ({exc})")
        except Exception as exc:   # cupy installed, no usable CUDA device or driver
            raise BackendUnavailable(f"backend 'cupy' found no CUDA device ({type(exc).__name__}: {exc})")
        return cupy
    raise ValueError(f"unknown backend {name!r} ({', '.join(CHOICES)})")


def gpu_available(name: str) -> bool:
    """Whether backend `name` has a GPU to run on here (imports the package only if it is installed)."""
    if importlib.util.find_spec(name) is None:
        return False
    try:
        if name == "cupy":
            import cupy
            return cupy.cuda.runtime.getDeviceCount() > 0
        if name == "jax":
            import jax
            return any(d.platform == "gpu" for d in jax.devices())
    except Exception:
        return False
    return False


def resolve(name: str) -> str:
    """A backend name checked: known (ValueError) and its package and device present (BackendUnavailable). "auto"
    is the Scheduler's choice (sched/backends.py), not an array namespace."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r} ({', '.join(CHOICES)})")
    namespace(name)     # raises BackendUnavailable with a one-line reason
    return name


def is_jax(xp) -> bool:
    return xp.__name__.startswith("jax")


def is_numpy(xp) -> bool:
    return xp is np


def precision(xp):
    """Context in which a backend computes with int64/float64: jax.enable_x64 for JAX, nothing otherwise."""
    if is_jax(xp):
        import jax
        scope = getattr(jax, "enable_x64", None)         # jax >= 0.6: jax.enable_x64(True) is a context manager
        if scope is None:
            from jax.experimental import enable_x64 as scope  # older jax
        return scope(True)
    return contextlib.nullcontext()


def to_host(a) -> np.ndarray:
    """A numpy copy of a backend array (CuPy needs .get(); numpy and JAX convert through __array__)."""
    if hasattr(a, "get") and not isinstance(a, np.ndarray):
        return a.get()
    return np.asarray(a)


# Smaller divisors are divided as they are: below ~1,500 elements the min/max check costs more than the scalar
# division saves (numpy 2.4 on the AMD EPYC VM: 500 elements 5.4 us divided, 10.2 us checked and divided by the
# scalar; 2,000: 17.9 / 15.5; 5,000: 42.8 / 24.9).
_SCALAR_DIVISOR_FROM = 1500


def trunc_div(xp, a, b):
    """Go's integer division: truncates toward zero (floor_divide floors; they differ for negative a)."""
    q = a // b
    return xp.where((q < 0) & (q * b != a), q + 1, q)


def score_div(xp, a, b):
    """a // b for b > 0 whose quotient is a score (|a / b| < 2**51), exactly on every backend. numpy and CuPy
    divide the integers. XLA:CPU divides int64 one element at a time (about 12 ns each here, three times a float64
    division), so JAX divides in float64 and corrects: with |a / b| < 2**51 the float quotient is within 1 of
    a / b whatever a's size (relative error at most 3 * 2**-53), so its floor is off by at most one, and the exact
    remainder a - q * b says which way. numpy divides an int64 array by an int64 array element by element (~15-20
    ns each on a slow CPU) but by a scalar several times faster: a large divisor holding one value on every node
    (one node type's allocatable, one weight sum) divides as that scalar."""
    if not is_jax(xp):
        if xp is np and getattr(b, "size", 0) > _SCALAR_DIVISOR_FROM and np.shape(a) == b.shape \
                and b.min() == b.max():
            return a // b.flat[0]
        return a // b
    q = xp.floor(a.astype(xp.float64) / b.astype(xp.float64)).astype(xp.int64)
    r = a - q * b
    return q + (r >= b).astype(xp.int64) - (r < 0).astype(xp.int64)


def round_half_away_div(a, b):
    """math.Round(float64(a) / float64(b)) for a >= 0, b > 0, exactly, in integers."""
    return (2 * a + b) // (2 * b)


def bincount(xp, index, weights, length: int):
    """Sum of weights per index value in [0, length); other indices are dropped. int64 result. Only numpy calls
    its bincount: CuPy's reads the largest index back to the host (a synchronisation) to size its output."""
    keep = index >= 0
    if is_numpy(xp):
        w = xp.where(keep, weights, 0).astype(xp.int64)
        return xp.bincount(xp.where(keep, index, 0), weights=w, minlength=length)[:length].astype(xp.int64)
    keep = keep & (index < length)
    safe = xp.where(keep, index, 0)
    w = xp.where(keep, weights, 0).astype(xp.int64)
    out = xp.zeros((length,), dtype=xp.int64)
    return add_at(xp, out, safe, w) if length else out


def set_at(xp, a, index, values):
    """A copy of `a` with a[index] = values (index: integer array or mask; duplicates must carry equal
    values, or land in an entry the caller drops). Inputs are never modified."""
    if is_jax(xp):
        return a.at[index].set(values)
    out = a.copy()
    out[index] = values
    return out


def add_at(xp, a, index, values):
    """A copy of `a` with values added at integer `index` (duplicates accumulate)."""
    if is_jax(xp):
        return a.at[index].add(values)
    out = a.copy()
    xp.add.at(out, index, values)
    return out


def update_slice(xp, a, start, values):
    """A copy of 1-d `a` with a[start:start + len(values)] = values, `start` a 0-d array (the slice must fit)."""
    if is_jax(xp):
        from jax import lax
        return lax.dynamic_update_slice(a, values, (start,))
    return set_at(xp, a, start + xp.arange(values.shape[0]), values)


def min_at(xp, a, index, values):
    """A copy of `a` with a[i] = min(a[i], values) at integer `index` (duplicates: the smallest wins)."""
    if is_jax(xp):
        return a.at[index].min(values)
    out = a.copy()
    xp.minimum.at(out, index, values)
    return out


def cummin(xp, a, axis: int):
    """Running minimum along `axis`. CuPy has no minimum.accumulate (only add and multiply accumulate there): it
    takes log2(size) doubling steps, each the minimum with the array shifted by 1, 2, 4, ... places."""
    if is_jax(xp):
        import jax.lax
        return jax.lax.cummin(a, axis=axis)
    if is_numpy(xp):
        return xp.minimum.accumulate(a, axis=axis)
    a = xp.moveaxis(a, axis, -1)
    size, shift = a.shape[-1], 1
    while shift < size:
        a = xp.concatenate([a[..., :shift], xp.minimum(a[..., shift:], a[..., :-shift])], axis=-1)
        shift *= 2
    return xp.moveaxis(a, -1, axis)


def smallest(xp, keys, count: int):
    """Indices of the `count` smallest keys, in increasing key order (keys among the first `count` must be
    distinct from each other and from the rest for the answer to be unique; phalanx's keys include a rank).
    numpy partitions first; JAX and CuPy sort (their argsort is stable, so equal keys keep index order)."""
    size = keys.shape[0]
    count = min(count, size)
    if count == 0:
        return xp.zeros((0,), dtype=xp.int64)
    if is_numpy(xp):
        if count < size:
            part = xp.argpartition(keys, count - 1)[:count]
            return part[xp.argsort(keys[part])]
        return xp.argsort(keys, kind="stable")[:count]
    # JAX: stable by default; CuPy: a stable radix sort (its argpartition reads back to the host)
    return xp.argsort(keys)[:count]


def argmax_first(xp, a):
    """Index of the first maximum (numpy, JAX and CuPy all return the first; spelled out for clarity)."""
    return xp.argmax(a)


def pin_rounding(xp, x, zero):
    """x unchanged, with its rounding fixed. XLA contracts a*b + c into one fused multiply-add (one rounding
    instead of numpy's two; jax 0.10.2 on CPU does it for a plain `a * b + c`, and no compile option turns it
    off). Passing a float64 product through its int64 bits OR'ed with `zero` (an int64 array that is 0 at run
    time but that the compiler cannot prove 0, e.g. minimum(counts, 0) of a non-negative input) keeps the
    product rounded on its own. The two float kernels (BalancedAllocation's std-dev, PodTopologySpread's score)
    also put a `where` between product and sum, which today stops the contraction on CPU by itself; the pin
    makes that independent of the compiler's choices (GPU code generation included). numpy and CuPy evaluate
    one operation at a time and never contract."""
    if not is_jax(xp):
        return x
    from jax import lax
    bits = lax.bitcast_convert_type(x, xp.int64) | zero
    return lax.bitcast_convert_type(bits, xp.float64)


def divide(xp, a, b):
    """a / b in float64, correctly rounded on every backend. XLA rewrites a division by a broadcast operand
    (`x / alloc[:, None]`, as the batch path's copy scores divide) into a multiplication by the reciprocal, which
    rounds twice; hiding the divisor behind an optimization barrier, at the full shape, keeps the division."""
    if xp is np or not is_jax(xp):
        return a / b
    from jax import lax
    shape = xp.broadcast_shapes(xp.shape(a), xp.shape(b))
    return a / lax.optimization_barrier(xp.broadcast_to(b, shape).astype(xp.float64))


@functools.lru_cache(maxsize=16)
def log_table(size: int) -> np.ndarray:
    """(size,) float64 with math.log(i) (libm, as Go's math.Log and the reference use) at i >= 1, 0 at 0.
    Backends' vectorised logs differ from libm (and from each other) in the last bit for a few integers;
    gathering from one table computed on the host makes every backend read the same bits."""
    return np.array([0.0] + [math.log(i) for i in range(1, size)], dtype=np.float64)


def sequential_sum(xp, x):
    """Sum over the last axis strictly left to right ((x0 + x1) + x2) + ..., as a Go `for` loop adds float64s.

    numpy's sum() adds pairwise, so float results can differ in the last bit; add.accumulate is sequential by
    definition. Other backends unroll the (static, short) axis."""
    if xp.__name__ == "numpy":
        return xp.add.accumulate(x, axis=-1)[..., -1]
    acc = x[..., 0]
    for i in range(1, x.shape[-1]):
        acc = acc + x[..., i]
    return acc
