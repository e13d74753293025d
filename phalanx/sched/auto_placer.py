"""backend "auto": the numpy Placer, handing segments of short runs to a JaxPlacer (on jax's default device: the GPU
when there is one) when that was measured faster per pod.

Which path is faster depends on the queue, not the cluster alone: runs of a few recurring shapes are
cheapest on numpy's kept shape results (sched/incremental.py: a few changed rows per cycle), all-distinct pods on
JAX's compiled segments (one XLA loop for hundreds of full evaluations). So the choice is made per segment, from
what each path cost here:

- numpy places the short runs (up to SEGMENT_RUN pods) until they have cost PROBE_AFTER_S in all; only then is a
  segment given to JAX (whose first program costs about two seconds to compile, so a queue numpy clears sooner
  never pays it);
- from then on each segment goes to the path with the lower measured seconds per pod (JAX's without its compile
  time), and the other path is measured again every RECHECK segments; a head JAX turns down before it has placed
  anything (runs it does not compile) leaves the segments to numpy until the next of those.

Decisions do not depend on the choice: the two paths decide alike (tests/test_backend_scheduler.py), and they
share the node table, nextStartNodeIndex and the PostFilter. Only the time does.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .jax_placer import SEGMENT_PODS, SEGMENT_RUN, BackendStats, JaxPlacer
from .placement import Placer, RunOutcome

PROBE_AFTER_S = 2.0   # seconds of numpy short runs before JAX is tried
RECHECK = 64          # segments between two measurements of the path not taken


@dataclass
class Cost:
    """Measured seconds per pod of one path."""
    seconds: float = 0.0
    pods: int = 0

    def add(self, seconds: float, pods: int) -> None:
        self.seconds += seconds
        self.pods += pods

    @property
    def per_pod(self) -> float:
        return self.seconds / self.pods if self.pods else float("inf")


class AutoPlacer(Placer):
    """The numpy Placer, with segments placed by a JaxPlacer when measured faster (module docstring)."""

    def __init__(self, cluster, framework, batching: bool, incremental: bool = True):
        super().__init__(cluster, framework, np, batching, incremental)
        self.segment_pods = SEGMENT_PODS
        self.numpy_cost, self.jax_cost = Cost(), Cost()
        self.segments = 0            # segments offered (a JAX one or numpy's runs in its place)
        self._jax: JaxPlacer | None = None      # made (and jax imported) when first tried
        self.refused = False         # JAX turned down a segment's head before it placed any pod
        self.members_s = 0.0         # seconds spent making JAX segment members

    @property
    def jax(self) -> JaxPlacer:
        if self._jax is None:
            self._jax = JaxPlacer(self.cluster, self.framework, self.batching)
        return self._jax

    @property
    def stats(self) -> BackendStats:
        return self._jax.stats if self._jax is not None else BackendStats()

    def use_jax(self) -> bool:
        """Whether the segment now starting goes to JAX."""
        self.segments += 1
        if self.numpy_cost.seconds < PROBE_AFTER_S:
            return False
        recheck = self.segments % RECHECK == 0
        if not self.jax_cost.pods:       # never measured: tried, and after a refused head only at the rechecks
            return recheck or not self.refused
        return (self.jax_cost.per_pod < self.numpy_cost.per_pod) != recheck

    def segment_member(self, shape, pods, head=None):
        if head is None and not self.use_jax():
            return None
        start = time.perf_counter()
        member = self.jax.segment_member(shape, pods, head)
        spent = time.perf_counter() - start
        self.jax_cost.seconds += spent      # a member's PreFilter and split: JAX's cost too
        self.members_s += spent
        self.refused |= head is None and member is None
        return member

    def place_segment(self, members, rank: np.ndarray):
        jax = self.jax
        jax.post_filter, jax.next_start = self.post_filter, self.next_start
        compiled, made, start = jax.stats.compile_s, self.members_s, time.perf_counter()
        pods = []

        def counted():
            for m in members:
                pods.append(len(m.pods))
                yield m

        out = jax.place_segment(counted(), rank)
        # The members made while it placed (segment_member) are counted there already.
        elapsed = time.perf_counter() - start - (jax.stats.compile_s - compiled) - (self.members_s - made)
        self.jax_cost.add(elapsed, sum(pods))
        self.next_start = jax.next_start
        return out

    def place_run(self, shape, pods, rank: np.ndarray) -> RunOutcome:
        start = time.perf_counter()
        out = super().place_run(shape, pods, rank)
        if len(pods) <= SEGMENT_RUN:
            self.numpy_cost.add(time.perf_counter() - start, len(pods))
        return out

    def nodes_changed(self) -> None:
        super().nodes_changed()
        if self._jax is not None:
            self._jax.nodes_changed()
