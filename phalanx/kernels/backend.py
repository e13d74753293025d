"""The few array operations whose spelling differs between numpy, JAX and CuPy.

Every kernel takes the array namespace `xp` explicitly; nothing here switches a global backend.
"""
from __future__ import annotations


def namespace(name: str):
    """The array module for a backend name; optional backends are imported only when asked for."""
    if name == "numpy":
        import numpy
        return numpy
    if name == "jax":
        import jax.numpy
        return jax.numpy
    if name == "cupy":
        import cupy
        return cupy
    raise ValueError(f"unknown backend {name!r} (numpy, jax, cupy)")


def trunc_div(xp, a, b):
    """Go's integer division: truncates toward zero (floor_divide floors; they differ for negative a)."""
    q = a // b
    return xp.where((q < 0) & (q * b != a), q + 1, q)


def round_half_away_div(a, b):
    """math.Round(float64(a) / float64(b)) for a >= 0, b > 0, exactly, in integers."""
    return (2 * a + b) // (2 * b)


def bincount(xp, index, weights, length: int):
    """Sum of weights per index value in [0, length); indices < 0 are dropped. int64 result."""
    keep = index >= 0
    safe = xp.where(keep, index, 0)
    w = xp.where(keep, weights, 0).astype(xp.int64)
    if xp.__name__.startswith("jax"):
        return xp.zeros((length,), dtype=xp.int64).at[safe].add(w)
    return xp.bincount(safe, weights=w, minlength=length)[:length].astype(xp.int64)
