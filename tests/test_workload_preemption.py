"""Workload-aware preemption (KEP-5710, v1.36): a PodGroup whose cycle fails is one preemptor, a PodGroup with
disruptionMode PodGroup one victim. phalanx against the plain reference (tests/reference/preemption.py
ref_workload_preempt, with tests/reference/groups.py's group cycle as the dry run) on random clusters, and
hand-checked toys: the victims, their order, the reasons appended to the group's status, what happens after."""
from __future__ import annotations

import math

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from strategies import make_node, make_pod, make_pod_group

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.disruption import PodDisruptionBudget
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.sched.records import BOUND, NOMINATED, PREEMPTED, Preempted

try:
    from tests.reference import preemption as R
    from tests.reference.groups import _try_group_cycle
    from tests.reference.profile import RefProfile, config_doc
except ImportError:  # tests/ itself on sys.path
    from reference import preemption as R
    from reference.groups import _try_group_cycle
    from reference.profile import RefProfile, config_doc

PROFILE = RefProfile(filters=("TaintToleration", "NodeResourcesFit"), scores=(("NodeResourcesFit", 1),),
                     post_filters=("DynamicResources", "DefaultPreemption"))
CONFIG = config_from_doc(config_doc(PROFILE), "test")


def scheduler(nodes, pods, groups, pdbs=(), config=CONFIG, **kw) -> Scheduler:
    objects = ClusterObjects(nodes=nodes, pods=pods, pod_groups=groups)
    objects.pdbs = list(pdbs)
    return Scheduler(Cluster.from_objects(objects), config, **kw)


def preemptions(sched: Scheduler) -> list[Preempted]:
    return [e for e in sched.log.entries if isinstance(e, Preempted)]


def full_cluster():
    """4 nodes of 4 cpu. job-a (priority 10, disruptionMode PodGroup) holds 2 cpu on each node, job-b (10,
    PodGroup) 1 cpu on each, the single pod "single" (priority 5) 1 cpu on n0: n0 is full, n1-n3 have 1 cpu free."""
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi") for i in range(4)]
    groups = [make_pod_group("job-a", min_count=4, priority=10, disruption_mode="PodGroup"),
              make_pod_group("job-b", min_count=4, priority=10, disruption_mode="PodGroup")]
    bound = []
    for i in range(4):
        bound.append(make_pod(f"a{i}", cpu="2", pod_group="job-a", node_name=f"n{i}"))
        bound.append(make_pod(f"b{i}", cpu="1", pod_group="job-b", node_name=f"n{i}"))
    bound.append(make_pod("single", cpu="1", priority=5, node_name="n0"))
    return nodes, bound, groups


# ----------------------------------------------------------------------------- toys
def test_cheapest_units_go_whole_and_the_gang_binds_after():
    # "big" (priority 1000) needs 4 x 2 cpu. Without every lower unit it fits. Most important first: job-a and
    # job-b (10, groups of 4: job-a first, bound first), then single (5). Given back in that order: job-a fits
    # back (each node 2 + 2); job-b does not (2 + 1 + 2 > 4); single does not (n0 2 + 1 + 2 > 4). So job-b
    # goes whole and single goes; job-a stays.
    nodes, bound, groups = full_cluster()
    big = make_pod_group("big", min_count=4, priority=1000)
    sched = scheduler(nodes, bound, groups + [big])
    records = sched.add_pods([make_pod(f"w{i}", cpu="2", pod_group="big") for i in range(4)])
    records += sched.run_until_idle()
    (entry,) = preemptions(sched)
    assert (entry.kind, entry.preemptor) == ("PodGroup", "default/big")
    assert entry.victims == ["default/b0", "default/b1", "default/b2", "default/b3", "default/single"]
    assert entry.nominated == {}              # the failed cycle placed no member
    assert {r.object for r in records if r.kind == PREEMPTED} == set(entry.victims)
    bound_now = {r.object: r.node for r in records if r.kind == BOUND}
    assert bound_now == {"default/w0": "n0", "default/w1": "n1", "default/w2": "n2", "default/w3": "n3"}
    assert all(sched.cluster.tensors.node_of(f"default/a{i}") == i for i in range(4))


def test_the_json_entry_names_the_group_and_its_nominated_members():
    # Two members fit without preemption (n1, n2 have 2 cpu free once "single" is on n0 only); the gang of 3
    # needs a third node: the failed cycle placed w0 on n1 and w1 on n2, and they are nominated there.
    nodes = [make_node(f"n{i}", cpu="2", memory="16Gi") for i in range(3)]
    low = make_pod("low", cpu="2", priority=1, node_name="n0")
    gang = make_pod_group("g", min_count=3, priority=100)
    sched = scheduler(nodes, [low], [gang])
    sched.add_pods([make_pod(f"w{i}", cpu="2", pod_group="g") for i in range(3)])
    result = sched.schedule()
    assert result.preemptions == [{"preemptor": "default/g", "kind": "PodGroup",
                                   "nominated": {"default/w0": "n1", "default/w1": "n2"},
                                   "victims": ["default/low"]}]
    assert set(result.bindings) == {"default/w0", "default/w1", "default/w2"}


def test_a_group_beats_a_single_pod_of_equal_priority_and_the_larger_group_the_smaller():
    # One node of 6 cpu holding: pod "p" (priority 5, 1 cpu), group "small" (5, PodGroup, 1 pod of 1 cpu),
    # group "large" (5, PodGroup, 2 pods of 1 cpu). Most important first: large, small, p. The preemptor gang
    # needs 4 cpu: 2 free + 2 given back: large fits back (2 + 2 + 2 = 6), then small (7 > 6) and p do not.
    node = make_node("n0", cpu="6", memory="16Gi")
    groups = [make_pod_group("small", min_count=1, priority=5, disruption_mode="PodGroup"),
              make_pod_group("large", min_count=2, priority=5, disruption_mode="PodGroup"),
              make_pod_group("g", min_count=2, priority=100)]
    bound = [make_pod("p", cpu="1", priority=5, node_name="n0"),
             make_pod("s0", cpu="1", pod_group="small", node_name="n0"),
             make_pod("l0", cpu="1", pod_group="large", node_name="n0"),
             make_pod("l1", cpu="1", pod_group="large", node_name="n0")]
    sched = scheduler([node], bound, groups)
    sched.add_pods([make_pod(f"w{i}", cpu="2", pod_group="g") for i in range(2)])
    sched.step(until=0)
    (entry,) = preemptions(sched)
    assert entry.victims == ["default/s0", "default/p"]


def test_pdb_violating_units_are_given_back_first():
    # Two single pods of priority 1 on one 2-cpu node, each 1 cpu; the gang needs 1 cpu. Importance: "old"
    # (started first) before "young". A PDB allowing no disruption covers "young": it is given back first and
    # stays; "old" goes. Without the PDB, "old" would be given back first and "young" would go.
    def run(pdbs):
        node = make_node("n0", cpu="2", memory="16Gi")
        pods = []
        for name, start in (("old", "2024-01-01T00:00:00Z"), ("young", "2024-01-01T01:00:00Z")):
            p = make_pod(name, cpu="1", priority=1, node_name="n0", labels={"app": name})
            pods.append(p.model_copy(update={"status": p.status.model_copy(update={"start_time": start,
                                                                                   "phase": "Running"})}))
        sched = scheduler([node], pods, [make_pod_group("g", min_count=1, priority=100)], pdbs)
        sched.add_pods([make_pod("w0", cpu="1", pod_group="g")])
        sched.step(until=0)
        return preemptions(sched)[0].victims

    pdb = PodDisruptionBudget.model_validate({"metadata": {"name": "keep-young", "namespace": "default"},
                                              "spec": {"selector": {"matchLabels": {"app": "young"}},
                                                       "maxUnavailable": 0}})
    assert run([]) == ["default/young"]
    assert run([pdb]) == ["default/old"]


def test_reasons_appended_to_the_group_status():
    nodes, bound, groups = full_cluster()
    members = [make_pod(f"w{i}", cpu="2", pod_group="g") for i in range(4)]

    def status(group, config=CONFIG, **kw):
        sched = scheduler(nodes, bound, groups + [group], config=config, **kw)
        sched.add_pods([m.model_copy(deep=True) for m in members])
        sched.step(until=0)
        assert not preemptions(sched)
        return sched.groups.states["default/g"].condition[2], sched.pending_message["default/w0"]

    # With TopologyAwareWorkloadScheduling on (phalanx's default) v1.36 runs the unconstrained group as one placement
    # of every node and reports its failure so; workload-aware preemption then appends its reason, and its re-runs
    # fail with the same status (schedule_one_podgroup.go).
    unplaced = "0/1 placements are available, first placement status: pod group is unschedulable"
    # Priority 5: no unit is lower (UnschedulableAndUnresolvable upstream).
    cond, member = status(make_pod_group("g", min_count=4, priority=5))
    assert cond == unplaced + ", No preemption victims found for incoming preemptor"
    assert member.endswith("no new claims to deallocate, preemption: not eligible due to workload aware "
                           "preemption enabled")
    # Priority 10: only "single" is lower, and without it the gang still does not fit: the re-run's status.
    cond, _ = status(make_pod_group("g", min_count=4, priority=10))
    assert cond == unplaced + ", " + unplaced
    # A member asking preemptionPolicy Never makes the group not eligible.
    never = [m.model_copy(deep=True) for m in members]
    never[2].spec.preemption_policy = "Never"
    sched = scheduler(nodes, bound, groups + [make_pod_group("g", min_count=4, priority=1000)])
    sched.add_pods(never)
    sched.step(until=0)
    assert sched.groups.states["default/g"].condition[2] == unplaced + ", not eligible due to preemptionPolicy=Never."
    # Topology-constrained groups are refused in v1.36.
    cond, _ = status(make_pod_group("g", min_count=4, priority=1000, topology="topology.kubernetes.io/zone"))
    assert cond.endswith(", workload aware preemption is not supported for pod groups with scheduling constraints")
    # A profile without DefaultPreemption.
    cond, member = status(make_pod_group("g", min_count=4, priority=1000), preemption=False)
    assert cond == unplaced + ", default preemption plugin is not registered, workload aware preemption is disabled"
    # Every member fails Filter (n0 is full, n1-n3 have 1 cpu free); DynamicResources is the only PostFilter left.
    assert member == "0/4 nodes are available: 4 Insufficient cpu. no new claims to deallocate"


def test_records_nominated_members_and_preempted_victims():
    nodes = [make_node(f"n{i}", cpu="2", memory="16Gi") for i in range(3)]
    sched = scheduler(nodes, [make_pod("low", cpu="2", priority=1, node_name="n0")],
                      [make_pod_group("g", min_count=3, priority=100)])
    records = sched.add_pods([make_pod(f"w{i}", cpu="2", pod_group="g") for i in range(3)])
    records += sched.step(until=0)
    assert [(r.kind, r.object, r.node) for r in records if r.kind in (NOMINATED, PREEMPTED)] == [
        (NOMINATED, "default/w0", "n1"), (NOMINATED, "default/w1", "n2"), (PREEMPTED, "default/low", None)]


# ----------------------------------------------------------------------------- against the reference
@st.composite
def wap_cases(draw):
    """Nodes, bound pods (singles and members of PodGroups in either disruption mode), and one pending gang."""
    n = draw(st.integers(1, 4))
    nodes = [make_node(f"n{i}", cpu=draw(st.sampled_from(["2", "3", "4"])), memory="16Gi") for i in range(n)]
    groups, bound = [], []
    for g in range(draw(st.integers(0, 4))):
        mode = draw(st.sampled_from(["PodGroup", "PodGroup", "Pod", None]))
        groups.append(make_pod_group(f"v{g}", min_count=1, priority=draw(st.sampled_from([1, 5, 10])),
                                     disruption_mode=mode))
        for j in range(draw(st.integers(1, 4))):
            bound.append(make_pod(f"v{g}-{j}", cpu=draw(st.sampled_from(["500m", "1"])),
                                  priority=draw(st.sampled_from([None, 1, 50])), pod_group=f"v{g}",
                                  node_name=f"n{draw(st.integers(0, n - 1))}"))
    for j in range(draw(st.integers(0, 5))):
        bound.append(make_pod(f"s{j}", cpu=draw(st.sampled_from(["500m", "1"])),
                              priority=draw(st.sampled_from([0, 1, 5, 50])),
                              node_name=f"n{draw(st.integers(0, n - 1))}"))
    size = draw(st.integers(1, 4))
    gang = make_pod_group("g", min_count=draw(st.integers(1, size)), priority=draw(st.sampled_from([5, 10, 100])))
    # Identical members are counted (MemberCount); mixed ones and host ports make the dry run re-run the cycle.
    kind = draw(st.sampled_from(["identical", "identical", "mixed", "host port"]))
    cpu = draw(st.sampled_from(["1", "2"]))
    members = [make_pod(f"w{i}", cpu=cpu if kind != "mixed" else draw(st.sampled_from(["1", "2"])), pod_group="g",
                        host_ports=((8080, "TCP", ""),) if kind == "host port" else ()) for i in range(size)]
    return nodes, bound, groups, gang, members


def ref_units(bound, groups) -> list:
    """The reference's victim units of the bound pods (groups by name in "default"; starts unset)."""
    by_key = {f"default/{g.metadata.name}": g for g in groups}

    def group_of(pod):
        sg = pod.spec.scheduling_group
        return by_key.get(f"default/{sg.pod_group_name}") if sg is not None else None

    return R.ref_units(bound, group_of, lambda g: g.spec.priority or 0, lambda p: p.spec.priority or 0,
                       lambda p: math.inf)


def ref_schedules_without(nodes, bound, gang, members):
    """The reference's dry run: the gang's cycle (tests/reference/groups.py) on `nodes` without some units."""
    def schedules_without(removed):
        gone = {id(p) for u in removed for p in u.pods}
        layout = {node.metadata.name: [p for p in bound if p.spec.node_name == node.metadata.name
                                       and id(p) not in gone] for node in nodes}
        _, placed, fit_errors, message = _try_group_cycle(gang, list(enumerate(members)), 0, nodes, layout, {},
                                                          PROFILE)
        return "" if message is None and placed else (message or next(iter(fit_errors.values()), "x"))
    return schedules_without


def reference(nodes, bound, groups, gang, members):
    return R.ref_workload_preempt(gang.spec.priority, "PreemptLowerPriority", ref_units(bound, groups),
                                  ref_schedules_without(nodes, bound, gang, members))


@settings(max_examples=100, deadline=None)
@given(wap_cases())
def test_matches_the_reference_on_random_clusters(case):
    nodes, bound, groups, gang, members = case
    sched = scheduler(nodes, bound, groups + [gang])
    sched.add_pods(members)
    records = sched.step(until=0)
    if any(r.kind == BOUND for r in records):
        event("the gang fit")
        return
    ok, victims, _ = reference(nodes, bound, groups, gang, members)
    got = preemptions(sched)
    event(f"preempted {'group' if any(u.is_group for u in victims_units(victims, groups)) else 'pods'}"
          if ok else "no preemption")
    assert bool(got) == ok
    if ok:
        assert got[0].victims == [f"default/{p.metadata.name}" for p in victims]


@settings(max_examples=100, deadline=None)
@given(wap_cases(), st.data())
def test_counting_the_members_equals_running_the_cycle(case, data):
    # MemberCount (identical members, node-local Filters) against the group's cycle re-run on cluster copies, on
    # the same sequence of unit sets as a reprieve loop makes (all units, then each one given back or not), with
    # a higher-priority pod nominated to a node half of the time (its load counts for the members).
    from phalanx.sched.cluster import Nomination
    from phalanx.sched.workload_preemption import GroupDryRun
    nodes, bound, groups, gang, members = case
    sched = scheduler(nodes, bound, groups + [gang])
    sched.add_pods(members)
    gs = sched.groups.states["default/g"]
    if data.draw(st.booleans()):
        other = make_pod("nominee", cpu=data.draw(st.sampled_from(["500m", "1"])), priority=1000)
        sched.cluster.grow_vocabularies([(other, sched.shape_of(other))])
        sched.cluster.nominations[other.key] = Nomination(
            other, f"n{data.draw(st.integers(0, len(nodes) - 1))}", 1000,
            sched.shape_of(other).request_vector(sched.cluster.tensors))
    counted, run = GroupDryRun(sched, gs), GroupDryRun(sched, gs)
    run.__dict__["_count"] = None
    event("counted" if counted._count is not None else "not countable")
    units = counted.units
    removed = list(units)
    assert counted.schedules_without(removed) == run.schedules_without(removed)
    for unit in units:
        trial = [u for u in removed if u is not unit]
        got = counted.schedules_without(trial)
        assert got == run.schedules_without(trial)
        if not got and data.draw(st.booleans()):
            removed = trial


@settings(max_examples=100, deadline=None)
@given(wap_cases(), st.integers(-5, 1100))
def test_units_below_a_priority_equal_the_laid_out_units_below_it(case, priority):
    """units_below answers "no unit below" from the bound pods' and PodGroups' priorities alone, without laying out
    every bound pod's unit (GpuMixGangs: over a million pods, per failed gang); whatever it answers equals the
    laid-out units below the priority, in order."""
    from phalanx.sched.workload_preemption import GroupDryRun
    nodes, bound, groups, gang, members = case
    sched = scheduler(nodes, bound, groups + [gang])
    sched.add_pods(members)
    gs = sched.groups.states["default/g"]
    quick, full = GroupDryRun(sched, gs), GroupDryRun(sched, gs)
    got = quick.units_below(priority)
    want = [u for u in full.units if u.priority < priority]
    assert [(u.key, u.rows.tolist()) for u in got] == [(u.key, u.rows.tolist()) for u in want]
    if all(sched.cluster.priority(p) >= priority for p in bound) and all(u.priority >= priority for u in full.units):
        event("answered without the layout")
        assert "_layout" not in quick.__dict__


def victims_units(victims, groups) -> list:
    """Whether some victim belongs to a PodGroup in PodGroup mode (for the statistics only)."""
    whole = {g.metadata.name for g in groups if g.spec.disruption_mode == "PodGroup"}
    return [R.RefUnit(p.metadata.name, [p], 0, p.spec.scheduling_group is not None
                      and p.spec.scheduling_group.pod_group_name in whole, 0) for p in victims]


def test_explain_group_lists_the_victim_units_and_the_gpu_hours_lost():
    # The preemption demo's cluster (4 nodes x 8 GPUs, every GPU busy at priority 100): the urgent gang of 8
    # (priority 1000) takes train-c (4 workers, started 60 min before the demo's now) and the 4 notebooks (30 min).
    # The snapshot's latest start (train-a's worker restarted 10 min before) is the scheduler's now, so train-c's
    # workers have run 50 min and the notebooks 20 min: 4 x 5/6 + 4 x 1/3 = 14/3 GPU-hours. train-c is a gang:
    # its 4 pods' work (10/3 GPU-hours) is lost with it. train-a and train-b are given back.
    from phalanx.demos import _preemption_cluster, _urgent
    from phalanx.sched.explain import explain_group
    objects, _ = _preemption_cluster()
    groups, urgent = _urgent(True)
    objects.pod_groups = objects.pod_groups + groups
    sched = Scheduler(Cluster.from_objects(objects))
    sched.add_pods(urgent)
    pre = explain_group(sched, "ml/urgent")["preemption"]
    assert [v["pod"] for v in pre["victims"]] == [f"ml/train-c-{i}" for i in range(4)] + \
        [f"ml/notebook-{i}" for i in range(4)]
    assert [v["hours_run"] for v in pre["victims"]] == [round(50 / 60, 6)] * 4 + [round(20 / 60, 6)] * 4
    assert pre["gangs_broken"] == [{"group": "ml/train-c", "pods": 4, "gpu_hours": round(4 * 50 / 60, 6)}]
    assert abs(pre["gpu_hours_lost"] - 14 / 3) < 1e-5
    assert [(s["unit"], s["why"]) for s in pre["spared"]] == [
        ("ml/train-a", "reprieved: the group still schedules with it"),
        ("ml/train-b", "reprieved: the group still schedules with it")]
    assert pre["spared_count"] == 2
    assert not preemptions(sched) and not sched.cluster.nominations      # a what-if


# ----------------------------------------------------------------------------- beyond v1.36: topology domains
def racks_cluster():
    """Racks a (n0, n1) and b (n2, n3), 4 cpu each. Rack a holds job-a (priority 10, disruptionMode PodGroup, 2 cpu
    on each node) and the single pod "s" (priority 5, 2 cpu on n0); rack b holds job-b (priority 20, PodGroup
    mode, 4 cpu on each node). Every cpu is taken."""
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi", labels={"rack": "ab"[i // 2]}) for i in range(4)]
    groups = [make_pod_group("job-a", min_count=2, priority=10, disruption_mode="PodGroup"),
              make_pod_group("job-b", min_count=2, priority=20, disruption_mode="PodGroup")]
    bound = [make_pod(f"a{i}", cpu="2", pod_group="job-a", node_name=f"n{i}") for i in range(2)]
    bound += [make_pod("s", cpu="2", priority=5, node_name="n0"), make_pod("a-extra", cpu="2", priority=5,
                                                                          node_name="n1")]
    bound += [make_pod(f"b{i}", cpu="4", pod_group="job-b", node_name=f"n{i + 2}") for i in range(2)]
    return nodes, bound, groups


def test_a_topology_constrained_gang_preempts_in_its_cheapest_domain():
    # "big" (priority 100, rack constraint) needs 2 x 4 cpu inside one rack. v1.36 refuses to preempt for it.
    # With topology preemption: in rack a every lower unit must go (job-a, s, a-extra: highest victim priority 10);
    # in rack b job-b must go (priority 20). The lower highest-victim priority wins: rack a. The gang then binds
    # there.
    nodes, bound, groups = racks_cluster()
    big = make_pod_group("big", min_count=2, priority=100, topology="rack")
    members = [make_pod(f"w{i}", cpu="4", pod_group="big") for i in range(2)]

    v136 = scheduler(nodes, bound, groups + [big])
    v136.add_pods(members)
    v136.run_until_idle()
    assert not preemptions(v136)
    assert v136.groups.states["default/big"].condition[2].endswith(
        "workload aware preemption is not supported for pod groups with scheduling constraints")

    sched = scheduler(nodes, bound, groups + [big], topology_preemption=True)
    records = sched.add_pods(members)
    records += sched.run_until_idle()
    (entry,) = preemptions(sched)
    assert entry.domain == "rack=a"
    assert entry.victims == ["default/a0", "default/a1", "default/s", "default/a-extra"]
    assert entry.summary()["domain"] == "rack=a"
    assert {r.object: r.node for r in records if r.kind == BOUND} == {"default/w0": "n0", "default/w1": "n1"}
    assert sched.cluster.tensors.node_of("default/b0") == 2


def test_explain_group_names_the_domain():
    from phalanx.sched.explain import explain_group, render_preemption
    nodes, bound, groups = racks_cluster()
    big = make_pod_group("big", min_count=2, priority=100, topology="rack")
    sched = scheduler(nodes, bound, groups + [big], topology_preemption=True)
    sched.add_pods([make_pod(f"w{i}", cpu="4", pod_group="big") for i in range(2)])
    pre = explain_group(sched, "default/big")["preemption"]
    assert pre["domain"] == "rack=a" and len(pre["victims"]) == 4
    assert render_preemption(pre)[0] == "  preemption in rack=a would evict 4 pods, 0 GPU-hours lost:"
    assert not preemptions(sched)


@st.composite
def rack_cases(draw):
    """wap_cases with the nodes in two or three racks and a gang constrained to one rack."""
    nodes, bound, groups, gang, members = draw(wap_cases())
    racks = draw(st.integers(2, 3))
    nodes = [n.model_copy(update={"metadata": n.metadata.model_copy(update={"labels": {
        **n.metadata.labels, "rack": f"r{draw(st.integers(0, racks - 1))}"}})}) for n in nodes]
    gang = make_pod_group("g", min_count=gang.spec.scheduling_policy.gang.min_count, priority=gang.spec.priority,
                          topology="rack")
    return nodes, bound, groups, gang, members


def reference_in_racks(nodes, bound, groups, gang, members):
    """ref_workload_preempt inside each rack (units with a pod there; the group's cycle on the rack's nodes), racks
    in order of their first node; the cheapest success by pickOneNodeForPreemption's criteria, a pod counting at
    its unit's priority and start."""
    units = ref_units(bound, groups)
    unit_of = {id(p): u for u in units for p in u.pods}
    candidates = []
    for rack in dict.fromkeys(n.metadata.labels["rack"] for n in nodes):
        inside = [n for n in nodes if n.metadata.labels["rack"] == rack]
        names = {n.metadata.name for n in inside}
        local = [u for u in units if any(p.spec.node_name in names for p in u.pods)]
        ok, victims, _ = R.ref_workload_preempt(gang.spec.priority, "PreemptLowerPriority", local,
                                                ref_schedules_without(inside, bound, gang, members))
        if ok:
            candidates.append(R.RefCandidate(f"rack={rack}", victims, 0))
    return R.pick_one(candidates, lambda p: unit_of[id(p)].priority, lambda p: unit_of[id(p)].start)


@settings(max_examples=100, deadline=None)
@given(rack_cases())
def test_topology_preemption_matches_the_reference(case):
    nodes, bound, groups, gang, members = case
    sched = scheduler(nodes, bound, groups + [gang], topology_preemption=True)
    sched.add_pods(members)
    records = sched.step(until=0)
    if any(r.kind == BOUND for r in records):
        event("the gang fit")
        return
    best = reference_in_racks(nodes, bound, groups, gang, members)
    got = preemptions(sched)
    event("preempted" if best is not None else "no preemption")
    assert bool(got) == (best is not None)
    if best is not None:
        assert (got[0].domain, got[0].victims) == (best.node, [f"default/{p.metadata.name}" for p in best.victims])


# ----------------------------------------------------------------------------- regressions (review of the fast paths)
def test_a_pod_group_added_after_its_pods_were_laid_out_is_one_victim_unit():
    # job-a's pods are bound before their PodGroup exists; a what-if (explain) lays the unit rows out then. When
    # job-a (disruptionMode PodGroup) arrives, "big" must evict it whole: a0 and a1 (priority 1) go together.
    # Each node: 2 cpu of job-a + 2 cpu of a priority-5 single pod; big needs 2 cpu, so the cheapest unit is job-a.
    from phalanx.sched.explain import explain_group
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi") for i in range(2)]
    bound = [make_pod("a0", cpu="2", priority=1, pod_group="job-a", node_name="n0"),
             make_pod("a1", cpu="2", priority=1, pod_group="job-a", node_name="n1"),
             make_pod("s0", cpu="2", priority=5, node_name="n0"), make_pod("s1", cpu="2", priority=5, node_name="n1")]
    sched = scheduler(nodes, bound, [make_pod_group("big", min_count=1, priority=100)])
    sched.add_pods([make_pod("w0", cpu="2", pod_group="big")])
    explain_group(sched, "default/big")
    sched.add_pod_group(make_pod_group("job-a", min_count=2, priority=1, disruption_mode="PodGroup"))
    sched.step(until=0)
    assert [e.victims for e in preemptions(sched)] == [["default/a0", "default/a1"]]


def test_a_pod_and_a_pod_group_of_the_same_name_are_two_units():
    # The pod "job" and the PodGroup "job" (disruptionMode PodGroup, pod j0) are different victim units: counting
    # the members must take both off, as re-running the cycle does. n0 holds j0 (2 cpu), n1 the pod "job" (2
    # cpu), both priority 1 on 2-cpu nodes; big needs 2 x 2 cpu, so both go.
    nodes = [make_node(f"n{i}", cpu="2", memory="16Gi") for i in range(2)]
    bound = [make_pod("j0", cpu="2", pod_group="job", node_name="n0"),
             make_pod("job", cpu="2", priority=1, node_name="n1")]
    groups = [make_pod_group("job", min_count=1, priority=1, disruption_mode="PodGroup"),
              make_pod_group("big", min_count=2, priority=100)]
    sched = scheduler(nodes, bound, groups)
    sched.add_pods([make_pod(f"w{i}", cpu="2", pod_group="big") for i in range(2)])
    sched.step(until=0)
    assert [e.victims for e in preemptions(sched)] == [["default/j0", "default/job"]]


def test_a_pod_bound_in_a_run_whose_later_pod_preempted_keeps_its_start_time():
    # x binds on n0 at t=0 in the same run in which y fails and runs PostFilter (which reads x's row before the
    # run binds x). y binds on n1 at t=5. x started earlier, so it is the more important: the gang evicts y.
    nodes = [make_node("n0", cpu="2", memory="16Gi"), make_node("n1", cpu="2", memory="16Gi")]
    sched = scheduler(nodes, [make_pod("b", cpu="2", priority=1000, node_name="n1")],
                      [make_pod_group("g", min_count=1, priority=100)])
    sched.add_pods([make_pod("x", cpu="2", priority=1), make_pod("y", cpu="2", priority=1)])
    sched.step(until=5)
    sched.delete_pod("default/b")
    sched.step(until=50)
    sched.add_pods([make_pod("w0", cpu="2", pod_group="g")])
    sched.step(until=100)
    assert [e.victims for e in preemptions(sched)] == [["default/y"]]


def test_domains_are_compared_on_the_pdb_violations_the_plugin_counted():
    # Rack r0 (node na, 3 cpu): a (priority 5, 1 cpu) and b (priority 1, 2 cpu), both under one PDB allowing one
    # disruption. Rack r1 (node nb, 2 cpu): c (priority 3, 2 cpu), no PDB. The 2-cpu member fits in r0 once b goes:
    # counted against the budgets, a (more important) takes the one disruption first, so evicting b violates the
    # PDB. In r1 evicting c violates nothing. Fewest violations wins: r1, although its victim's priority is higher.
    try:
        from tests.test_preemption import pdb_object
    except ImportError:
        from test_preemption import pdb_object
    nodes = [make_node("na", cpu="3", memory="16Gi", labels={"rack": "r0"}),
             make_node("nb", cpu="2", memory="16Gi", labels={"rack": "r1"})]
    bound = [make_pod("a", cpu="1", priority=5, labels={"app": "x"}, node_name="na"),
             make_pod("b", cpu="2", priority=1, labels={"app": "x"}, node_name="na"),
             make_pod("c", cpu="2", priority=3, node_name="nb")]
    sched = scheduler(nodes, bound, [make_pod_group("g", min_count=1, priority=100, topology="rack")],
                      pdbs=[pdb_object(0, R.RefPDB("default", {"app": "x"}, 1))], topology_preemption=True)
    sched.add_pods([make_pod("w0", cpu="2", pod_group="g")])
    sched.step(until=0)
    assert [(e.domain, e.victims) for e in preemptions(sched)] == [("rack=r1", ["default/c"])]


def test_pod_group_with_an_unknown_priority_class_is_refused():
    """The priority admission resolves a PodGroup's priorityClassName into spec.priority and refuses a class that
    does not exist: an input error at load and at add_pod_group, before anything changes; system classes resolve."""
    from phalanx.cluster_models import InputError, pod_group_priority

    missing = make_pod_group("g", min_count=1, priority_class_name="gold")
    message = 'PodGroup default/g: spec.priorityClassName: PriorityClass "gold" not found'
    with pytest.raises(InputError, match=f"^{message}$"):
        Cluster.from_objects(ClusterObjects(nodes=[make_node("n1")], pod_groups=[missing]))
    s = Scheduler(Cluster.from_objects(ClusterObjects(nodes=[make_node("n1")])))
    with pytest.raises(InputError, match=f"^{message}$"):
        s.add_pod_group(missing)
    assert "default/g" not in s.groups.states and s.cluster.pod_groups == []
    assert pod_group_priority(make_pod_group("s", priority_class_name="system-node-critical"), {}) == 2_000_001_000
