"""Intake of many pods at once: template runs (consecutive pods made from one template, sharing its objects) are
checked, queued and interned as one; the queue, the decisions and the errors are those of pods that share nothing."""
import pytest

from phalanx.cluster_models import ClusterObjects, InputError
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.queue import cut_runs
from phalanx.sched.shapes import template_runs
from strategies import make_node, make_pod


def _replicas(template, names, **meta):
    return [template.replaced(metadata=template.metadata.replaced(name=name, **meta)) for name in names]


def _nominated(template, name, node):
    return template.replaced(metadata=template.metadata.replaced(name=name),
                             status=template.status.model_copy(update={"nominated_node_name": node}))


def test_template_runs_cut_where_a_shared_object_or_the_namespace_changes():
    t = make_pod("t", cpu="1")
    pods = [*_replicas(t, ["a", "b", "c"]), make_pod("u", cpu="1"), *_replicas(t, ["e"]), _nominated(t, "f", "n1"),
            *_replicas(t, ["g"], namespace="x"), *_replicas(t, ["h"], namespace="x")]
    assert template_runs(pods) == [0, 3, 4, 5, 6, 8]
    assert template_runs([]) == [0] and template_runs(pods[:1]) == [0, 1]


def test_runs_keep_their_arrivals_as_a_range_when_consecutive():
    # cut_runs: runs cut where the shape or the priority changes; a run's arrivals (ascending within a priority) are a
    # range when consecutive, their list otherwise.
    a, b = object(), object()
    runs = cut_runs(list("pqrstuvw"), [a, a, a, a, b, b, a, a], [5, 5, 5, 5, 5, 5, 5, 1], [0, 1, 2, 4, 5, 6, 9, 3])
    assert [(r.pods, r.seqs, r.priority) for r in runs] == [
        (list("pqrs"), [0, 1, 2, 4], 5), (["t", "u"], range(5, 7), 5), (["v"], range(9, 10), 5), (["w"], range(3, 4), 1)]


def _mixed(shared: bool):
    """Pods of two priorities (out of queue order), a nominated one and one no profile serves: replicas sharing
    their template's objects, or each pod built on its own."""
    def pods(name, names, **kw):
        if shared:
            return _replicas(make_pod(name, **kw), names)
        return [make_pod(n, **kw) for n in names]
    low = dict(cpu="1", memory="1Gi", priority=10)
    high = dict(cpu="2", memory="1Gi", priority=100)
    out = [*pods("l", ["l0", "l1", "l2"], **low), *pods("h", ["h0", "h1"], **high), *pods("l", ["l3", "l4"], **low),
           *pods("o", ["o0"], cpu="1", scheduler_name="other"), *pods("l", ["l5", "l6"], **low)]
    template = make_pod("l", **low)
    out.insert(4, _nominated(template, "n0", "n2") if shared else _nominated(make_pod("n0", **low), "n0", "n2"))
    return out


def _scheduler():
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    return Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes)))


def _queue(sched):
    active = sched.queue.in_order()[0]
    return [(prio, seq, [p.key for p in entry.pods], list(entry.seqs), entry.shape.id) for prio, seq, entry in active]


def test_a_call_of_shared_templates_queues_and_decides_as_pods_sharing_nothing():
    shared, alone = _scheduler(), _scheduler()
    shared.add_pods(_mixed(True), warnings := [])
    alone.add_pods(_mixed(False), warnings_alone := [])
    assert _queue(shared) == _queue(alone)
    assert warnings == warnings_alone and list(shared.unserved) == list(alone.unserved) == ["default/o0"]
    assert shared.arrival == alone.arrival
    assert shared.schedule().bindings == alone.schedule().bindings


def test_templates_interleaved_in_arrival_order_queue_and_decide_as_pods_sharing_nothing():
    # Runs of a few templates' replicas interleaved (each spec's later runs go to the queue without asking again),
    # with a nominated pod and a pod no profile serves of the same specs as plain runs before them.
    def arrivals(shared: bool):
        specs = {"a": dict(cpu="1", priority=10), "b": dict(cpu="2", priority=100), "o": dict(cpu="1")}
        templates = {name: make_pod(name, **kw) for name, kw in specs.items()}
        out, taken = [], 0
        for name, count in [("a", 2), ("b", 1), ("a", 3), ("b", 2), ("a", 1)]:
            names = [f"{name}{taken + i}" for i in range(count)]
            taken += count
            out += _replicas(templates[name], names) if shared else [make_pod(n, **specs[name]) for n in names]
        nominated = _nominated(templates["a"] if shared else make_pod("x", **specs["a"]), "x", "n2")
        unserved = templates["a"].replaced(spec=templates["a"].spec.model_copy(update={"scheduler_name": "other"}))
        out.insert(5, nominated)
        return [*out, *_replicas(unserved, ["u0", "u1"]), *_replicas(templates["a"], ["a9"])]

    shared, alone = _scheduler(), _scheduler()
    shared.add_pods(arrivals(True), warnings := [])
    alone.add_pods(arrivals(False), warnings_alone := [])
    assert _queue(shared) == _queue(alone)
    assert warnings == warnings_alone and list(shared.unserved) == list(alone.unserved) == ["default/u0", "default/u1"]
    assert shared.arrival == alone.arrival
    assert list(shared.cluster.nominations) == list(alone.cluster.nominations) == ["default/x"]
    assert shared.schedule().bindings == alone.schedule().bindings


def test_the_first_refused_pod_in_arrival_order_is_named():
    sched = _scheduler()
    sched.add_pods([make_pod("p0", cpu="1")])
    known, bad_class = make_pod("p0", cpu="1"), make_pod("p9", cpu="1", priority_class_name="nope")
    replicas = _replicas(make_pod("r", cpu="1"), ["r0", "r1"])
    with pytest.raises(InputError, match="^Pod default/p0: metadata.name: already exists$"):
        sched.add_pods([*replicas, known, bad_class])
    with pytest.raises(InputError, match="^Pod default/p9: "):
        sched.add_pods([*replicas, bad_class, known])
    with pytest.raises(InputError, match="^Pod default/r1: metadata.name: already exists$"):
        sched.add_pods([*replicas, *_replicas(replicas[0], ["r1"])])
    assert list(sched.arrival) == ["default/p0"]          # nothing of a refused call stays


def test_a_spec_met_again_with_other_annotations_is_checked_again():
    # Templates are checked once per (spec, annotations): a later run of a spec that passed, with annotations of its
    # own, is checked for them.
    sched = _scheduler()
    t, u = make_pod("t", cpu="1"), make_pod("u", cpu="1")
    bad = t.replaced(metadata=t.metadata.replaced(name="bad", annotations={"alibabacloud.com/gpu-count": "x"}))
    with pytest.raises(InputError, match="^Pod default/bad: metadata.annotations: "):
        sched.add_pods([*_replicas(t, ["t0", "t1"]), *_replicas(u, ["u0"]), *_replicas(t, ["t2"]), bad])
    assert not sched.arrival
