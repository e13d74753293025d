"""Scheduler.delete_pods (the victims of one preemption leave together, one POD_DELETED event) against deleting the
same pods one by one (one event each): the same records, the same pods woken into the same activeQ runs, and the
same decisions afterwards. The pooled pods are rejected by plugins whose queueing hints depend on which pod was
deleted (InterPodAffinity, PodTopologySpread) and by one whose hint does not (NodeResourcesFit)."""
from __future__ import annotations

import numpy as np
import pytest
from strategies import make_node, make_pod

from phalanx.cluster_models import ClusterObjects
from phalanx.sched.cluster import Cluster
from phalanx.sched.queue import PodRun
from phalanx.sched.scheduler import Scheduler

APPS = ("a", "b", "c")


def random_cluster(seed: int) -> tuple[Scheduler, list[str]]:
    """A small full cluster, pending pods left in the unschedulable pool, and the bound pods to delete."""
    rng = np.random.default_rng(seed)
    nodes = [make_node(f"n{i}", cpu="2", labels={"zone": f"z{i % 3}"}) for i in range(6)]
    bound = []
    for i in range(int(rng.integers(8, 13))):
        bound.append(make_pod(f"b{i}", cpu="500m", labels={"app": str(rng.choice(APPS))},
                              node_name=f"n{i % len(nodes)}"))
    pending = []
    for i in range(int(rng.integers(6, 13))):          # few templates: pods of one shape woken together
        app = str(rng.choice(APPS))
        kind = int(rng.integers(3))
        if kind == 0:          # NodeResourcesFit: any deletion may help
            pod = make_pod(f"p{i}", cpu=str(rng.choice(["1100m", "1500m"])), labels={"app": "x"})
        elif kind == 1:        # InterPodAffinity: only deleting a pod its anti-affinity selects helps
            term = {"label_selector": {"match_labels": {"app": app}}, "topology_key": "zone"}
            pod = make_pod(f"p{i}", cpu="100m", labels={"app": "x"},
                           pod_affinity={"pod_anti_affinity": {
                               "required_during_scheduling_ignored_during_execution": [term]}})
        else:                  # PodTopologySpread: only deleting a pod its selector counts helps
            spread = {"max_skew": 1, "topology_key": "zone", "when_unsatisfiable": "DoNotSchedule",
                      "label_selector": {"match_labels": {"app": app}}}
            pod = make_pod(f"p{i}", cpu="100m", labels={"app": app}, spread=[spread])
        pending.append(pod)
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound + pending)))
    sched.schedule()
    live = [p.key for p, _ in sched.cluster.tensors.live_bound()]
    victims = [live[i] for i in rng.choice(len(live), size=min(len(live), int(rng.integers(2, 5))), replace=False)]
    return sched, victims


def queue_state(sched: Scheduler) -> tuple:
    """The activeQ, backoffQ and error backoffQ entry by entry (runs as their pods' keys) and the pool."""
    def entry(e):
        return tuple(p.key for p in e.pods) if isinstance(e, PodRun) else e.key
    active, backoff, errors = sched.queue.in_order()
    return ([(prio, seq, entry(e)) for prio, seq, e in active],
            [(at, prio, seq, entry(e)) for at, prio, seq, e in backoff],
            [(at, seq, entry(retry.run), retry.progress) for at, seq, retry in errors], sorted(sched.queue.unschedulable))


def as_tuples(records) -> list[tuple]:
    return [tuple(vars(r).values()) for r in records]


@pytest.mark.parametrize("seed", range(40))
def test_deleting_together_equals_deleting_one_by_one(seed):
    together, victims = random_cluster(seed)
    one_by_one, _ = random_cluster(seed)
    records = together.delete_pods(victims, "evicted")
    expected = [r for key in victims for r in one_by_one.delete_pod(key, "evicted")]
    assert as_tuples(records) == as_tuples(expected)
    assert queue_state(together) == queue_state(one_by_one)
    assert as_tuples(together.step(together.now + 30)) == as_tuples(one_by_one.step(one_by_one.now + 30))


def test_the_cases_cover_hints_that_depend_on_the_deleted_pod():
    """Among the seeds above: pods that only a later deleted pod wakes (a later batch of runs), and pods that no
    deleted pod wakes."""
    later = unwoken = 0
    for seed in range(40):
        together, victims = random_cluster(seed)
        first_only, _ = random_cluster(seed)
        pooled = set(together.queue.unschedulable)
        together.delete_pods(victims, "evicted")
        first_only.delete_pods(victims[:1], "evicted")
        woken = pooled - set(together.queue.unschedulable)
        later += bool(woken - (pooled - set(first_only.queue.unschedulable)))
        unwoken += bool(pooled - woken)
    assert later and unwoken


def _parked_by_walk(sched: Scheduler) -> list:
    """The groups a cluster event retries, by the definition: every group state left unschedulable, in order."""
    return [gs for gs in sched.groups.states.values() if gs.state == "unschedulable"]


def test_a_deletion_retries_exactly_the_unschedulable_groups_in_their_order():
    from phalanx.cluster_models.generate import gang_pods

    nodes = [make_node(f"n{i}", cpu="2") for i in range(2)]
    bound = [make_pod(f"b{i}", cpu="1500m", node_name=f"n{i}") for i in range(2)]
    groups, members = gang_pods(3, 2, cpu="1", memory="1Mi")
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound + members, pod_groups=groups)))
    sched.schedule()
    parked = sched.groups.unschedulable()
    assert [gs.key for gs in parked] == ["default/gang-0", "default/gang-1", "default/gang-2"]
    assert parked == _parked_by_walk(sched)
    sched.delete_pod("default/b0")               # frees n0 for one gang: every parked group is retried
    assert sched.groups.unschedulable() == _parked_by_walk(sched) == []
    sched.schedule()
    assert sorted(sched.cluster.tensors.node_of(f"default/gang-0-{i}") for i in range(2)) == [0, 0]
    assert [gs.key for gs in sched.groups.unschedulable()] == ["default/gang-1", "default/gang-2"]
    assert sched.groups.unschedulable() == _parked_by_walk(sched)
