"""A strict CPU stand-in for CuPy, for tests: code written for `xp=cupy` runs on numpy and fails where CuPy would
fail or would silently synchronise. A test double, not a backend: it computes with numpy on the host, models only
the rules below, and says nothing about speed or about CuPy's numerics.

Rules (what CuPy does, and how it is modelled):
1. Device arrays are `DeviceArray` (a numpy.ndarray subclass); `strict_namespace()` is a module-like object
   (`__name__ == "strict_device"`, neither numpy nor JAX to phalanx.kernels.backend) whose attributes wrap numpy's:
   functions take DeviceArrays and Python/numpy scalars and return DeviceArrays (0-d for numpy scalars, as CuPy);
   `xp.ndarray` is DeviceArray; dtypes, `iinfo`, `finfo` and constants are numpy's own.
2. No implicit host-to-device transfer: CuPy raises TypeError for a numpy.ndarray given to its functions, ufuncs and
   operators, in indices and in assigned values. So does this, 0-d numpy arrays included (CuPy lets a 0-d one
   through comparisons only). Explicit copies: `xp.asarray`/`xp.array`/`xp.asanyarray` of anything not a
   DeviceArray (counted in `xp.transfers_to_device`). Python lists are accepted where CuPy accepts them.
3. No implicit device-to-host conversion: CuPy's `__array__` raises TypeError. DeviceArray.__array__ raises it too,
   and every numpy *function* given a DeviceArray (np.sum(dev), np.flatnonzero(dev)) raises TypeError through
   `__array_function__` (stricter than CuPy, which forwards np.<f> to cupy.<f> where it has one: kernels must call
   xp.<f>). numpy *ufuncs* on DeviceArrays (np.add(dev, dev), operators) run, as CuPy's `__array_ufunc__` does.
   Hole: np.asarray(dev) / np.array(dev) return a plain view without calling anything (numpy never asks an ndarray
   subclass), so they slip through, and so does phalanx.kernels.backend.to_host (DeviceArray is an np.ndarray, so
   it never calls .get()). Explicit copies: `dev.get()`, `xp.asnumpy(dev)`, `to_host(dev)` (`xp.transfers_to_host`).
4. Implicit synchronisation: bool/int/float/complex/__index__ (if, slice bounds, range), item, tolist, format,
   output shapes that depend on values (nonzero, flatnonzero, argwhere, where(c), unique*, bincount (CuPy reads
   x.max()), compress, extract, repeat with array counts, set routines, boolean-mask a[m] and a[m] = v) and device
   arrays used as sizes (xp.zeros(n), xp.arange(n)). Each raises `ImplicitSync` inside `with xp.no_sync():`, and
   otherwise runs and counts one in `xp.syncs`. repr/str do not count (debugging output).
5. Integer (fancy, 0-d) device indices, slices with Python ints, `a[idx] += v` (buffered, as numpy and CuPy),
   arithmetic and comparisons all stay on the device; reductions (.sum(), .max(), .argmax(), ...) return 0-d
   DeviceArrays; .shape/.dtype/.ndim/.size/len() are metadata.
6. CuPy's ufunc methods are limited (cupy/_core/_kernel.pyx, _routines_indexing.pyx): reduce and accumulate only
   for add and multiply, reduceat only for add, at only for add/subtract/maximum/minimum/bitwise_and/or/xor and
   only on some dtypes (int64 add/maximum/minimum.at from CuPy 14.1). Other calls raise NotImplementedError or
   TypeError as CuPy does; `strict_namespace(ufunc_limits=False)` lifts this, `cupy_version=(13, 6)` models 13.x.
"""
from __future__ import annotations

import contextlib
import operator
import types

import numpy as np

__all__ = ["DeviceArray", "ImplicitSync", "StrictNamespace", "strict_namespace", "to_host"]


class ImplicitSync(Exception):
    """An operation that would synchronise a CuPy device ran inside `xp.no_sync()`."""


def _unwrap(x, what: str, host_ok: bool = False):
    """DeviceArrays (also inside lists and tuples) as plain numpy views; numpy arrays refused unless host_ok."""
    if isinstance(x, DeviceArray):
        return x.view(np.ndarray)
    if isinstance(x, np.ndarray) and not host_ok:
        raise TypeError(f"{what}: got a numpy.ndarray; CuPy refuses an implicit host-to-device transfer "
                        "(copy it explicitly with xp.asarray)")
    if type(x) in (list, tuple):
        return type(x)(_unwrap(v, what, host_ok) for v in x)
    return x


def _wrap(x, ns):
    """numpy results as DeviceArrays of namespace `ns` (numpy scalars as 0-d arrays, as CuPy returns them)."""
    if isinstance(x, (np.ndarray, np.generic)):
        out = np.asarray(x).view(DeviceArray)
        out._ns = ns
        return out
    if isinstance(x, tuple):
        items = [_wrap(v, ns) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    return [_wrap(v, ns) for v in x] if isinstance(x, list) else x


def _on_device(x) -> bool:
    return isinstance(x, DeviceArray) or (type(x) in (list, tuple) and any(map(_on_device, x)))


def _call(ns, f, what, args, kwargs, host_ok=False):
    result = f(*_unwrap(args, what, host_ok), **{k: _unwrap(v, what) for k, v in kwargs.items()})
    out = kwargs.get("out")
    if out is not None:            # CuPy (and numpy) return the `out` array itself
        return out[0] if type(out) is tuple and len(out) == 1 else out
    return _wrap(result, ns)


class DeviceArray(np.ndarray):
    """A 'device' array: numpy storage, CuPy's rules (see the module docstring). Make them with the namespace."""

    _ns = None

    def __array_finalize__(self, obj):
        self._ns = getattr(obj, "_ns", None)

    @property
    def _xp(self) -> StrictNamespace:
        return self._ns if self._ns is not None else _DEFAULT

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"numpy.{func.__name__}() given a DeviceArray: Implicit conversion to a NumPy array is "
                        f"not allowed (call xp.{func.__name__}, or copy with .get())")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self._xp._check_method(ufunc, method, inputs)
        if ufunc.__name__ in _COMPARISONS:   # CuPy takes 0-d numpy operands here (np.int64(1) > dev makes one)
            inputs = tuple(x.item() if type(x) is np.ndarray and x.ndim == 0 else x for x in inputs)
        return _call(self._xp, getattr(ufunc, method), f"numpy.{ufunc.__name__}", inputs, kwargs)

    def _index(self, key, what):
        parts = []
        for k in key if type(key) is tuple else (key,):
            if isinstance(k, DeviceArray) and k.dtype == np.bool_:
                self._xp._sync(f"boolean-mask {what} (a[mask])")
            elif isinstance(k, slice):     # device bounds go through __index__ (a sync), as on CuPy
                k = slice(*(None if b is None else operator.index(b) for b in (k.start, k.stop, k.step)))
            parts.append(k)
        return _unwrap(tuple(parts), what)

    def __getitem__(self, key):
        return _wrap(self.view(np.ndarray)[self._index(key, "indexing")], self._xp)

    def __setitem__(self, key, value):
        self.view(np.ndarray)[self._index(key, "assignment")] = _unwrap(value, "assignment")

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def get(self) -> np.ndarray:
        """Explicit device-to-host copy (CuPy's ndarray.get)."""
        self._xp.transfers_to_host += 1
        return self.view(np.ndarray).copy()

    def __repr__(self):
        return f"DeviceArray({np.ndarray.__repr__(self.view(np.ndarray))})"

    __str__ = __repr__


def _synced(name):
    base = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        self._xp._sync(f"a.{name}()")
        return base(self.view(np.ndarray), *args, **kwargs)
    return method


def _routed(name):
    def method(self, *args, **kwargs):
        return getattr(self._xp, name)(self, *args, **kwargs)
    return method


for _name in ("__bool__", "__int__", "__float__", "__complex__", "__index__", "__format__", "item", "tolist"):
    setattr(DeviceArray, _name, _synced(_name))
# Methods that would return numpy scalars, or bypass the checks in C: computed by the namespace instead.
for _name in ("argmax", "argmin", "max", "min", "sum", "prod", "any", "all", "mean", "cumsum", "cumprod", "clip",
              "nonzero", "take", "repeat", "searchsorted", "dot", "put"):
    setattr(DeviceArray, _name, _routed(_name))
DeviceArray.compress = lambda self, condition, *args, **kwargs: self._xp.compress(condition, self, *args, **kwargs)

# Functions whose output shape depends on values (CuPy reads them back), and creation functions' size arguments.
_SYNCING = {"nonzero", "flatnonzero", "argwhere", "unique", "unique_values", "unique_counts", "unique_inverse",
            "unique_all", "bincount", "compress", "extract", "setdiff1d", "intersect1d", "union1d", "setxor1d",
            "argpartition"}     # argpartition: seen synchronising under cupyx.allow_synchronize(False), CuPy 14.2
_SIZED = {"zeros": 1, "ones": 1, "empty": 1, "full": 1, "arange": 3, "eye": 3, "identity": 1, "tri": 3}
_COMPARISONS = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"}
_EXPLICIT = {"asarray", "array", "asanyarray"}
_VALUE_BOOLS = {"allclose", "array_equal", "array_equiv"}      # Python bools in numpy, 0-d arrays in CuPy
_AT = {"add": "int32 float16 float32 float64 uint32 uint64", "subtract": "int32 uint32",
       "maximum": "int32 float32 float64 uint32 uint64", "minimum": "int32 float32 float64 uint32 uint64",
       "bitwise_and": "int32 int64 uint32 uint64", "bitwise_or": "int32 int64 uint32 uint64",
       "bitwise_xor": "int32 int64 uint32 uint64"}
_INT64_AT = ("add", "maximum", "minimum")                       # from CuPy 14.1
_METHODS = {"reduce": ("add", "multiply"), "accumulate": ("add", "multiply"), "reduceat": ("add",)}


class StrictNamespace:
    """Module-like: numpy's attributes, wrapped. Counters: syncs, transfers_to_device, transfers_to_host."""

    def __init__(self, module=np, root=None, *, cupy_version=(14, 1), ufunc_limits=True):
        self._module, self._root = module, root or self
        self.__name__ = "strict_device" if root is None else f"strict_device.{module.__name__.split('.')[-1]}"
        self.ndarray = DeviceArray
        self.syncs = self.transfers_to_device = self.transfers_to_host = 0
        self._guard = 0
        self._limits, self._int64_at = ufunc_limits, tuple(cupy_version) >= (14, 1)

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, every implicit synchronisation raises ImplicitSync."""
        root = self._root
        root._guard += 1
        try:
            yield
        finally:
            root._guard -= 1

    def _sync(self, what: str):
        root = self._root
        if root._guard:
            raise ImplicitSync(f"{what} synchronises the CuPy device (inside xp.no_sync())")
        root.syncs += 1

    def _check_method(self, ufunc, method, args):
        """CuPy's limits on ufunc methods (rule 6)."""
        name, root = ufunc.__name__, self._root
        if not root._limits or method in ("__call__", "outer"):
            return
        if method == "at":
            ok = _AT.get(name, "").split() + (["int64"] if root._int64_at and name in _INT64_AT else [])
            if name not in _AT:
                raise NotImplementedError(f"`cupy_{name}.at` is not supported yet")
            if np.dtype(args[0].dtype).name not in ok:
                raise TypeError(f"cupy.{name}.at only supports {', '.join(ok)} as data type")
        elif name not in _METHODS.get(method, ()):
            raise NotImplementedError(f"`cupy_{name}.{method}` is not supported yet")

    def asnumpy(self, a) -> np.ndarray:
        """cupy.asnumpy: explicit device-to-host copy."""
        return a.get() if isinstance(a, DeviceArray) else np.asarray(a)

    def __getattr__(self, name):
        if name.startswith("_") and not name.startswith("__"):
            raise AttributeError(name)                     # private names are the namespace's own (copy, pickle)
        attr = getattr(self._module, name)
        if isinstance(attr, types.ModuleType):
            value = StrictNamespace(attr, self._root)
        elif isinstance(attr, np.ufunc):
            value = _Ufunc(self._root, attr)
        elif isinstance(attr, type) or not callable(attr):
            value = attr                                   # dtypes, iinfo, finfo, constants
        else:
            value = self._function(name, attr)
        setattr(self, name, value)
        return value

    def _function(self, name, f):
        root = self._root

        def call(*args, **kwargs):
            if name in _SYNCING or (name == "where" and len(args) + len(kwargs) == 1) or (
                    name == "repeat" and _on_device(args[1:2] + ((kwargs["repeats"],) if "repeats" in kwargs else ()))):
                root._sync(f"xp.{name}")
            if name in _SIZED and _on_device(args[:_SIZED[name]] + tuple(
                    v for k, v in kwargs.items() if k in ("shape", "start", "stop", "step", "N", "M", "k"))):
                root._sync(f"xp.{name} with a device array as a size")
            if name in _EXPLICIT and args and not _on_device(args[0]):
                root.transfers_to_device += 1
            result = _call(root, f, f"xp.{name}", args, kwargs, host_ok=name in _EXPLICIT)
            return _wrap(np.bool_(result), root) if name in _VALUE_BOOLS else result
        call.__name__ = call.__qualname__ = name
        call.__doc__ = f.__doc__
        return call


class _Ufunc:
    """A numpy ufunc on DeviceArrays, with CuPy's limits on its methods."""

    def __init__(self, ns, ufunc):
        self._ns, self._ufunc, self.__name__ = ns, ufunc, ufunc.__name__

    def __call__(self, *args, **kwargs):
        return self._apply("__call__", args, kwargs)

    def __getattr__(self, name):
        if name in ("reduce", "accumulate", "reduceat", "outer", "at"):
            return lambda *args, **kwargs: self._apply(name, args, kwargs)
        return getattr(self._ufunc, name)

    def _apply(self, method, args, kwargs):
        self._ns._check_method(self._ufunc, method, args)
        return _call(self._ns, getattr(self._ufunc, method), f"xp.{self.__name__}.{method}", args, kwargs)


def strict_namespace(*, cupy_version=(14, 1), ufunc_limits: bool = True) -> StrictNamespace:
    """A fresh namespace (own counters and no_sync guard) standing in for `cupy`."""
    return StrictNamespace(cupy_version=cupy_version, ufunc_limits=ufunc_limits)


def to_host(a) -> np.ndarray:
    """Explicit device-to-host copy of a DeviceArray (counted); other values through np.asarray."""
    return a.get() if isinstance(a, DeviceArray) else np.asarray(a)


_DEFAULT = StrictNamespace()      # for DeviceArrays made without a namespace (e.g. np.arange(3).view(DeviceArray))
