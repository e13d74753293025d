"""The CuPy backend of the Placer: the JAX backend's placement program (sched/device_program.py) run eagerly on
CuPy arrays, the node table resident on the GPU.

What runs where (backend="cupy"):

- on the GPU: every Filter, PreScore/Score, NormalizeScore, node sampling, selectHost and the state update of each
  pod (or batch round), as CuPy kernels queued on the stream by a Python loop (`HostLoop`): the host never waits
  for a pod's result. It fetches the stop flag (one explicit copy) every CHECK_EVERY pods, every batch round, and
  the call's summary (placed count, the chosen nodes; the failed pod's Filter codes when one failed) at the end:
  nothing else comes back, and nothing goes over implicitly (tests run the loop under a no-synchronisation guard:
  CuPy's `cupyx.allow_synchronize(False)` on a GPU, tests/strict_device.py's on a CPU).
- resident on the GPU between calls, as on JAX: the padded node table; each chunk's plugin states, copied once per
  configuration (kept by its pickled static configuration, least recently used first out; per placer).
- on the host: PreFilter, the node table (the source of truth), and the runs JAX would not compile (per-pod
  host state: DRA claims, GPU shares; pods nominated to nodes; explain), which take the numpy Placer's path.

Decisions are numpy's (tests/test_cupy_placer.py: the placer on the strict CPU stand-in on every CI run, on CuPy
when a GPU is present). `stats.compiles` / `compile_s` count the plugin-state copies (CuPy compiles its own
kernels on first use and caches them on disk).
"""
from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import OrderedDict

import numpy as np

from ..kernels.backend import namespace
from ..plugins.framework import Plugin
from .cluster import Cluster
from .cycle import Prepared
from .device_program import HostLoop, run_program
from .framework import Framework
from .jax_placer import BackendStats, JaxPlacer
from .placement import Placer

CHECK_EVERY = 32     # pods queued between two fetches of the stop flag (a pod that fits nowhere ends the run)
STATES_KEPT = 64     # plugin-state copies on the device, by configuration
GUARD = None         # a context entered around each queued step, when none is given (tests: a no-sync guard)


def to_device(put, tree):
    """`tree` with every numpy array copied by `put`: through tuples (named too), lists, dicts and dataclasses; a
    plugin (shared, holding no per-pod arrays) and any other object are kept as they are."""
    if isinstance(tree, np.ndarray):
        return put(tree)
    if isinstance(tree, Plugin):
        return tree
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(to_device(put, v) for v in tree))
    if type(tree) in (tuple, list):
        return type(tree)(to_device(put, v) for v in tree)
    if type(tree) is dict:
        return {k: to_device(put, v) for k, v in tree.items()}
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        return dataclasses.replace(tree, **{f.name: to_device(put, getattr(tree, f.name))
                                            for f in dataclasses.fields(tree) if f.init})
    return tree


def prepared_on_device(put, p: Prepared) -> Prepared:
    """p with its plugins' states and allowed nodes copied by `put` (what the placement program reads of it)."""
    return dataclasses.replace(p, filters=to_device(put, p.filters), scores=to_device(put, p.scores),
                               allowed=to_device(put, p.allowed))


class CupyPlacer(JaxPlacer):
    """Placer whose runs are placed by the device program on CuPy arrays (see the module docstring)."""

    def __init__(self, cluster: Cluster, framework: Framework, batching: bool):
        Placer.__init__(self, cluster, framework, np, batching)     # the host paths: numpy's
        self.device = namespace("cupy")
        self.guard = GUARD or contextlib.nullcontext
        self.stats = BackendStats()
        self._resident = None
        self._device_states: OrderedDict[bytes, tuple] = OrderedDict()

    evaluate = Placer.evaluate      # explain / what-if: on the host

    def _put(self, tree):
        if isinstance(tree, dict):
            return {name: self.device.asarray(v) for name, v in tree.items()}
        return self.device.asarray(tree)

    def _get(self, tree):
        if isinstance(tree, tuple):
            return tuple(v.get() for v in tree)
        return tree.get()

    def _stop_flag(self, going) -> bool:
        self.stats.syncs += 1
        return bool(going.get())

    def _program(self, key: bytes, static: tuple, arrays: dict, state: dict):
        """The static configuration with its plugin states on the device (copied once per configuration)."""
        device_static = self._device_states.get(key)
        if device_static is None:
            t0 = time.perf_counter()
            device_static = (prepared_on_device(self.device.asarray, static[0]), *static[1:])
            self._device_states[key] = device_static
            if len(self._device_states) > STATES_KEPT:
                self._device_states.popitem(last=False)
            self.stats.compiles += 1
            self.stats.compile_s += time.perf_counter() - t0
        else:
            self._device_states.move_to_end(key)
        return device_static

    def _finished(self, pending) -> bool:
        return True         # the loop fetched its stop flags as it went: what is left is queued on the stream

    def _execute(self, program, arrays: dict, state: dict, k: int):
        batch = program[8]        # the static configuration's `batch` (in run_program's unpacking order)
        loop = HostLoop(k, 1 if batch else CHECK_EVERY, self._stop_flag, self.guard)
        return run_program(self.device, program, arrays, state, loop)
