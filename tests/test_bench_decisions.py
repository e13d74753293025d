"""bench/decisions.json holds numpy's decision digests, against which GPU runs are checked without running numpy on
the device (bench/backends.py --recorded). They must stay numpy's: a change of decisions fails here until the digests
are recorded again (bench/backends.py --record NAME ...)."""
import importlib.util
import json
from pathlib import Path

import pytest

from phalanx.scenarios import SCENARIOS
from phalanx.sched import Cluster, Scheduler

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_backends():
    spec = importlib.util.spec_from_file_location("bench_backends", BENCH / "backends.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["SchedulingBasic_5000Nodes_10000Pods", "SchedulingKubeMix_5000Nodes_5000Pods",
                                  "GangScheduling_5000Nodes_1000Gangs_3Pods"])
def test_recorded_digests_are_numpys(name):
    recorded = json.loads((BENCH / "decisions.json").read_text())[name]
    scheduler = Scheduler(Cluster.from_objects(SCENARIOS[name].build()))
    result = SCENARIOS[name].schedule(scheduler)
    assert len(result.bindings) == recorded["bound"]
    assert _bench_backends().decision_digest(result) == recorded["digest"]
