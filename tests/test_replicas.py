"""The columnar bulk arrival (Scheduler.add_replicas): replicas of a template queued without Pod objects
(cluster_models.Replicas) decide, record and warn as add_pods of the same pods made one by one; bad input is refused
whole."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects, InputError
from phalanx.cluster_models.objects import Replicas, pod_keys
from phalanx.sched import Cluster, Scheduler
from strategies import _cluster_base, make_node, make_pod


def test_replicas_are_the_template_renamed_made_when_read():
    template = make_pod("t", cpu="1", labels={"app": "a"})
    template = template.replaced(metadata=template.metadata.replaced(uid="u-1"))
    r = Replicas(template, "w-", 5, 4)
    assert len(r) == 4 and r.names() == ["w-5", "w-6", "w-7", "w-8"]
    assert r.keys() == pod_keys(list(r)) == ["default/w-5", "default/w-6", "default/w-7", "default/w-8"]
    pod = r[-1]
    assert pod.metadata.name == "w-8" and pod.metadata.uid == "" and pod.spec is template.spec
    assert pod.metadata.labels == {"app": "a"} and template.metadata.name == "t"
    tail = r[1:3]
    assert isinstance(tail, Replicas) and tail.names() == ["w-6", "w-7"] and len(r[3:1]) == 0
    assert [p.metadata.name for p in r[::2]] == ["w-5", "w-7"]
    with pytest.raises(IndexError):
        r[4]


def _records(records):
    return [(r.time, r.kind, r.object, r.node, r.message) for r in records]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_replicas_decide_as_the_same_pods_added_one_by_one(data):
    """Arrivals of replicas of random templates (with a run until idle after some), on random clusters: the same
    records, warnings, queue arrivals and bindings as add_pods of the same pods."""
    _, nodes, classes, templates = data.draw(_cluster_base(8))
    arrivals = data.draw(st.lists(st.tuples(st.integers(0, len(templates) - 1), st.integers(1, 6), st.booleans()),
                                  min_size=1, max_size=6))
    scheds = [Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, priority_classes=classes, warnings=[])))
              for _ in range(2)]
    logs = [[], []]
    warnings = [[], []]
    for k, (t, count, run) in enumerate(arrivals):
        template = make_pod(f"t{k}", **templates[t])
        replicas = Replicas(template, f"r{k}-", 0, count)
        logs[0] += scheds[0].add_replicas(template, count, prefix=f"r{k}-", warnings=warnings[0])
        logs[1] += scheds[1].add_pods([make_pod(name, **templates[t]) for name in replicas.names()], warnings[1])
        assert scheds[0].arrival == scheds[1].arrival
        if run:
            for s, log in zip(scheds, logs):
                log += s.run_until_idle()
    for s, log in zip(scheds, logs):
        log += s.run_until_idle()
    assert _records(logs[0]) == _records(logs[1])
    assert warnings[0] == warnings[1]
    assert scheds[0].pending_message == scheds[1].pending_message


def _scheduler():
    return Scheduler(Cluster.from_objects(ClusterObjects(nodes=[make_node("n0", cpu="4", memory="8Gi")])))


def _state(sched):
    active = sched.queue.in_order()[0]
    return dict(sched.arrival), [(prio, seq, [p.key for p in e.pods]) for prio, seq, e in active], sched._seq


@pytest.mark.parametrize("call, error", [
    (lambda s, t: s.add_replicas(t, -1), r"^Pod default/t: replicas: must be a non-negative integer \(got -1\)$"),
    (lambda s, t: s.add_replicas(t, True), r"^Pod default/t: replicas: must be a non-negative integer \(got True\)$"),
    (lambda s, t: s.add_replicas(t, 2, start=1.5),
     r"^Pod default/t: start: must be a non-negative integer \(got 1.5\)$"),
    (lambda s, t: s.add_replicas(t, 2, prefix="W-"), r'^Pod default/W-0: metadata.name: must be a DNS subdomain'),
    (lambda s, t: s.add_replicas(t, 11, prefix="w" * 252), r"^Pod default/w+10: metadata.name: must be a DNS "
                                                            r"subdomain of at most 253 characters \(got 254\)$"),
    (lambda s, t: s.add_replicas(t, 3, prefix="p-"), r"^Pod default/p-1: metadata.name: already exists$"),
    (lambda s, t: s.add_replicas(make_pod("b", cpu="1", node_name="n0"), 2),
     r"^Pod default/b-0: spec.nodeName: already bound; add it to the cluster input instead$"),
    (lambda s, t: s.add_replicas(make_pod("c", cpu="1", priority_class_name="nope"), 2), r"^Pod default/c-0: "),
])
def test_bad_replicas_are_refused_whole(call, error):
    sched = _scheduler()
    sched.add_pods([make_pod("p-1", cpu="1")])
    before = _state(sched)
    with pytest.raises(InputError, match=error):
        call(sched, make_pod("t", cpu="1"))
    assert _state(sched) == before


def test_replicas_a_plugin_holds_back_go_as_pods():
    """Gated replicas wait, each with its own record, as add_pods' pods do; zero replicas are nothing."""
    gated = make_pod("g", cpu="1", scheduling_gates=["wait"])
    a, b = _scheduler(), _scheduler()
    assert _records(a.add_replicas(gated, 2)) == _records(b.add_pods(list(Replicas(gated, "g-", 0, 2))))
    assert list(a.queue.held) == ["default/g-0", "default/g-1"] and a.add_replicas(gated, 0, prefix="z-") == []


def test_queued_replicas_are_checkpointed_as_their_pods():
    """A checkpoint taken while replicas wait in the activeQ holds them as pods; the restored scheduler decides as
    the original from there."""
    import json

    from phalanx.sched.checkpoint import restore_scheduler, scheduler_state
    sched = _scheduler()
    sched.add_replicas(make_pod("big", cpu="3"), 2)
    sched.add_replicas(make_pod("w", cpu="500m"), 4, prefix="web-", start=10)
    state = json.loads(json.dumps(scheduler_state(sched)))
    assert [doc["pods"] for _, _, doc in state["queue"]["active"]] == [
        ["default/big-0", "default/big-1"], ["default/web-10", "default/web-11", "default/web-12", "default/web-13"]]
    copy = _scheduler()
    restore_scheduler(copy, state)
    assert _records(sched.run_until_idle()) == _records(copy.run_until_idle())
