"""Soak: one Scheduler driven through tens of thousands of random events (pods, PodGroups, deletions with
reused names, node changes, clock steps) in both gang modes, with test_simulation's model checking every
invariant after every event (capacity, gangs all-or-nothing, records against tensors, every pending pod told
why). The cluster is kept to a bounded size, so the scheduler's queues, pools, markers, group states, binding
log and shapes must stay the size they were once warm; RSS is measured after the first quarter and at the end
and may grow only with the decision log (a stated amount per record).

Events come from a seeded random.Random (hypothesis cannot draw sequences this long); `make test-long` only.
"""
from __future__ import annotations

import gc
import os
import random
import resource
import time

import pytest
from strategies import make_node, make_pod, make_pod_group
from test_simulation import Sim, allocatable, group_key_of, is_gang, quantity

EVENTS = int(os.environ.get("PHALANX_SOAK_EVENTS", "20000"))
MAX_PODS = 120            # live pods the generator keeps (deletes above it)
NODES = (3, 16)           # node count kept in this range
GROUPS = 10               # PodGroup names g0..g9 (and late0, late1, which pods name before they exist)
# From the first quarter to the end, RSS may grow by this much per record made in between: the decision log
# grows with the events by design (the scheduler's entries keep their pods, the model keeps Record copies;
# about 1.3 KB per record measured), everything else is bounded (checked by size below).
RSS_PER_RECORD_KB = 3.0

pytestmark = pytest.mark.long


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Events:
    """Random events that can happen in the simulation's current state."""

    def __init__(self, rng: random.Random, sim: Sim):
        self.rng, self.sim, self.counter = rng, sim, 0

    def pod(self, name, namespace="default", group=None):
        r = self.rng
        gpu = r.choice([None, None, None, 1])
        return make_pod(name, namespace=namespace, cpu=r.choice(["100m", "250m", "500m", "1", "2"]),
                        memory=r.choice(["64Mi", "256Mi", "1Gi"]), gpu=gpu, pod_group=group,
                        priority=r.choice([None, 0, 100]), labels={"app": r.choice("abc")},
                        scheduling_gates=["wait"] if r.random() < 0.03 else ())

    def node(self, name, **kw):
        r = self.rng
        return make_node(name, cpu=r.choice(["1", "2", "4", "8"]), memory=r.choice(["2Gi", "8Gi", "16Gi"]),
                         pods=r.choice([5, 110, 110]), gpu=r.choice([None, 0, 1, 2]),
                         labels={"topology.kubernetes.io/zone": r.choice(["z1", "z2"])}, **kw)

    def next(self) -> tuple:
        r, sim = self.rng, self.sim
        live = len(sim.pods)
        if live > MAX_PODS:
            return self.delete()
        if len(sim.nodes) < NODES[0]:
            return self.add_node()
        kind = r.choice(["add_pods"] * 4 + ["add_group", "delete", "delete", "add_node", "update_node",
                                             "remove_node", "step", "step", "step", "idle"])
        if kind == "add_pods":
            pods = []
            for _ in range(r.randint(1, 4)):
                reusable = [k for k in sim.deleted[-50:] if k not in sim.pods and all(p.key != k for p in pods)]
                if reusable and r.random() < 0.2:        # a new pod under a deleted pod's name
                    namespace, name = r.choice(reusable).split("/")
                    pods.append(self.pod(name, namespace))
                    continue
                self.counter += 1
                target = r.choice(["plain", "group", "group", "late"])
                if target == "group" and sim.groups:
                    namespace, group = r.choice(sorted(sim.groups)).split("/")
                    pods.append(self.pod(f"x{self.counter}", namespace, group))
                elif target == "late":
                    pods.append(self.pod(f"x{self.counter}", group=r.choice(["late0", "late1"])))
                else:
                    pods.append(self.pod(f"x{self.counter}"))
            return ("add_pods", pods)
        if kind == "add_group":
            name = r.choice(["late0", "late1", *(f"g{i}" for i in range(GROUPS))])   # PodGroups are never deleted
            if f"default/{name}" in sim.groups:
                return self.step()
            return ("add_group", make_pod_group(name, "default", r.choice([None, 1, 2, 3, 4]),
                                                r.choice([None, 0, 100])))
        if kind == "delete":
            return self.delete()
        if kind == "add_node":
            return self.add_node() if len(sim.nodes) < NODES[1] else self.step()
        if kind == "update_node":
            name = r.choice(sorted(sim.nodes))
            old = sim.nodes[name]
            alloc = {res: quantity(res, q) for res, q in allocatable(old).items()}
            alloc["cpu"] = r.choice(["1", "2", "4", "8"])
            return ("update_node", make_node(name, cpu=None, memory=None, pods=None,
                                             labels=dict(old.metadata.labels), hostname_label=False,
                                             unschedulable=r.random() < 0.2, extra=alloc))
        if kind == "remove_node":
            return ("remove_node", r.choice(sorted(sim.nodes))) if len(sim.nodes) > NODES[0] else self.step()
        if kind == "idle":
            return ("idle",)
        return self.step()

    def step(self) -> tuple:
        return ("step", self.sim.s.now + self.rng.choice([0.0, 0.5, 1.0, 2.0, 10.0, 30.0, 400.0]))

    def add_node(self) -> tuple:
        self.counter += 1
        return ("add_node", self.node(f"n{self.counter}"))

    def delete(self) -> tuple:
        r, sim = self.rng, self.sim
        gangs = sorted({g for p in sim.pods.values() if (g := group_key_of(p)) in sim.groups
                        and is_gang(sim.groups[g])})
        if gangs and r.random() < 0.3:
            return ("delete", sim.members(r.choice(gangs), sim.pods), "completed", True)
        single = sorted(k for k, p in sim.pods.items()          # plain pods and members of basic groups
                        if (g := group_key_of(p)) is None or g not in sim.groups or not is_gang(sim.groups[g]))
        if not single:
            return self.step()
        return ("delete", [r.choice(single)], r.choice(["deleted", "completed"]), False)


def bookkeeping(s) -> dict[str, int]:
    """Sizes of the scheduler's per-pod and per-group structures; with the cluster kept bounded, none of them
    may grow with the number of events (the decision log is the only thing that does)."""
    q, tensors = s.queue, s.cluster.tensors
    return {"activeQ + backoffQ": len(q.entries()), "unschedulable pool": len(q.unschedulable),
            "attempts": len(q.attempts), "held": len(q.held), "deletion markers": len(q.deleted),
            "listening": sum(len(v) for v in q._listening.values()), "arrival": len(s.arrival),
            "pending messages": len(s.pending_message), "group states": len(s.groups.states),
            "group members": len(s.groups.of_pod), "binding log rows": tensors.log_mark(),
            "affinity term rows": tensors.affinity_terms().count, "shapes": sum(
                len(t.shapes) for t in {id(t): t for t in (s.shapes, *s.shapes_by_profile.values())}.values())}


@pytest.mark.parametrize("gang_mode", ["podgroup", "permit"])
def test_soak_invariants_after_every_event_and_memory_flat(gang_mode):
    rng = random.Random(f"soak-{gang_mode}")
    nodes = [make_node(f"n{i}", gpu=rng.choice([None, 1, 2])) for i in range(8)]
    groups = [make_pod_group(f"g{i}", "default", rng.choice([None, 2, 3])) for i in range(3)]
    sim = Sim(nodes, [], [], groups, gang_mode=gang_mode, permit_timeout_s=rng.choice([5.0, 300.0]))
    sim.do(("start", True))
    events = Events(rng, sim)
    t0 = time.perf_counter()
    warm = None
    for i in range(EVENTS):
        sim.do(events.next())
        if i == EVENTS // 4:
            sim.actions.clear()
            gc.collect()
            warm = rss_mb(), bookkeeping(sim.s), len(sim.log)
    sim.do(("idle",))
    sim.finish()
    sim.actions.clear()          # the replay list is the test's, not the scheduler's
    gc.collect()
    end = rss_mb(), bookkeeping(sim.s)
    print(f"\nsoak {gang_mode}: {EVENTS} events in {time.perf_counter() - t0:.0f}s, {len(sim.log)} records; "
          f"RSS {warm[0]:.0f} -> {end[0]:.0f} MB; " + ", ".join(f"{k} {warm[1][k]} -> {v}" for k, v in end[1].items()))
    assert len(sim.log) - warm[2] >= EVENTS // 2, "the events stopped doing anything"
    assert end[0] - warm[0] <= RSS_PER_RECORD_KB * (len(sim.log) - warm[2]) / 1024
    bound = {k: max(2 * MAX_PODS, 4 * warm[1][k]) for k in warm[1]}
    grew = {k: (warm[1][k], v) for k, v in end[1].items() if v > bound[k]}
    assert not grew, f"grows with the events: {grew}"
