"""The JAX backend's compiled programs are a bounded, least-recently-used cache (jax_placer.ProgramCache): a
process that runs many small scenarios of varied shapes one after another (a simulation, a sweep) keeps at most
`capacity` programs, and dropping one releases its code mappings. Each run reports what it compiled.

The long test runs a few hundred such scenarios in one process and checks that the process's memory mappings
(vm.max_map_count is 65,530 by default; XLA:CPU needs about 170 per program) and RSS stay flat once the cache
is full, within the margins below.
"""
from __future__ import annotations

import gc
import importlib.util
import random

import pytest
from strategies import make_node, make_pod

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")

MAPS_MARGIN = 600         # mappings: about three programs' worth
RSS_MARGIN_MB = 64


def small_scenario(rng: random.Random) -> ClusterObjects:
    """2-40 nodes, a few pod shapes (tolerations and node selectors are compiled in, so they make programs)."""
    nodes = [make_node(f"n{i}", cpu=str(rng.randint(2, 16)), memory=f"{rng.randint(2, 32)}Gi",
                       labels={f"k{rng.randint(0, 3)}": f"v{rng.randint(0, 2)}"},
                       taints=[(f"t{rng.randint(0, 2)}", "", "NoSchedule")] if rng.random() < 0.3 else ())
             for i in range(rng.randint(2, 40))]
    templates = [dict(tolerations=[{"key": f"t{rng.randint(0, 2)}", "operator": "Exists"}] if rng.random() < 0.4
                      else (),
                      node_selector={f"k{rng.randint(0, 3)}": f"v{rng.randint(0, 2)}"} if rng.random() < 0.3 else None)
                 for _ in range(rng.randint(1, 3))]
    pods = [make_pod(f"p{j}", cpu=f"{rng.randint(1, 8) * 100}m", **rng.choice(templates))
            for j in range(rng.randint(1, 30))]
    return ClusterObjects(nodes=nodes, pods=pods)


def maps_count() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


@pytest.fixture
def programs(monkeypatch):
    """A fresh process-wide cache of the given capacity for the test."""
    from phalanx.sched import jax_placer

    def make(capacity: int):
        cache = jax_placer.ProgramCache(capacity)
        monkeypatch.setattr(jax_placer, "PROGRAMS", cache)
        return cache
    return make


def test_cache_keeps_the_most_recently_used():
    from phalanx.sched.jax_placer import ProgramCache
    cache = ProgramCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1          # a is now the most recent
    cache.put("c", 3)                   # b goes
    assert (cache.get("b"), cache.get("a"), cache.get("c"), len(cache), cache.evictions) == (None, 1, 3, 2, 1)
    with pytest.raises(ValueError, match="ProgramCache: capacity must be at least 1, got 0"):
        ProgramCache(0)


def test_capacity_from_the_environment(monkeypatch):
    from phalanx.kernels.backend import BackendUnavailable
    from phalanx.sched import jax_placer
    monkeypatch.setenv("PHALANX_JAX_PROGRAMS", "12")
    assert jax_placer._capacity_from_env() == 12
    for raw, message in (("many", "PHALANX_JAX_PROGRAMS: not an integer: 'many'"),
                         ("0", "PHALANX_JAX_PROGRAMS: must be at least 1, got 0")):
        monkeypatch.setenv("PHALANX_JAX_PROGRAMS", raw)
        with pytest.raises(BackendUnavailable, match=message):
            jax_placer._capacity_from_env()


def test_a_bad_capacity_is_a_one_line_error(tmp_path, monkeypatch):
    """The variable is read when the JAX backend is first imported: the CLI reports it as the backend's reason."""
    import sys

    from typer.testing import CliRunner

    from phalanx.cli import app
    (tmp_path / "n.yaml").write_text('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}, '
                                     '"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}')
    monkeypatch.delitem(sys.modules, "phalanx.sched.jax_placer", raising=False)
    monkeypatch.setenv("PHALANX_JAX_PROGRAMS", "x")
    res = CliRunner().invoke(app, ["schedule", "--cluster", str(tmp_path), "--backend", "jax"])
    assert res.exit_code == 2
    assert res.stderr.strip() == "error: --backend: PHALANX_JAX_PROGRAMS: not an integer: 'x'"


def test_scenarios_in_one_process_keep_at_most_capacity_programs_and_decide_as_numpy(programs):
    cache = programs(2)
    rng = random.Random(7)
    compiled = 0
    for _ in range(3):
        objects = small_scenario(rng)
        want = Scheduler(Cluster.from_objects(objects)).schedule()
        s = Scheduler(Cluster.from_objects(objects), backend="jax")
        got = s.schedule()
        assert got.bindings == want.bindings and got.unschedulable == want.unschedulable
        assert got.compiles == s.placer.stats.compiles       # what this run compiled, reported per run
        assert (got.compiles > 0) == (got.compile_s > 0)
        compiled += got.compiles
        assert len(cache) <= 2
    assert compiled > 2 and cache.evictions == compiled - len(cache)


@pytest.mark.long
def test_hundreds_of_scenarios_keep_maps_and_rss_flat(programs):
    cache = programs(16)
    rng = random.Random(11)
    warm = None
    compiled = 0
    for i in range(300):
        s = Scheduler(Cluster.from_objects(small_scenario(rng)), backend="jax")
        compiled += s.schedule().compiles
        if warm is None and cache.evictions >= 2 * cache.capacity:      # full, and turned over twice
            gc.collect()
            warm = (i, maps_count(), rss_mb())
    gc.collect()
    end = (maps_count(), rss_mb())
    assert warm is not None and warm[0] < 150
    print(f"\n300 scenarios, {compiled} compiles, {cache.evictions} evictions; from scenario {warm[0]}: "
          f"maps {warm[1]} -> {end[0]}, RSS {warm[2]:.0f} -> {end[1]:.0f} MB")
    assert end[0] - warm[1] <= MAPS_MARGIN
    assert end[1] - warm[2] <= RSS_MARGIN_MB
