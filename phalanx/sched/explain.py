"""explain: why a pod would land where it lands, node by node, plugin by plugin.

Every filter that runs for the pod is evaluated on every node (upstream stops at the first failure; the
node's `first_failure` names that plugin, and only its reasons count in the message). Scores are reported for
feasible nodes only, as upstream scores only those.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..cluster_models import Pod, pod_group_priority
from ..cluster_models.generate import GPU
from ..cluster_models.gpus import device_request
from ..cluster_models.requests import pod_requests
from ..kernels.status import CODE_NAMES, ERROR, SUCCESS
from .messages import outside_reason
from .podgroups import QUORUM_MESSAGE, GroupState
from .scheduler import Scheduler


def explain_pod(scheduler: Scheduler, pod: Pod, waiting: str | None = None) -> dict:
    """{"nodes": [{"name", "filters", "scores", "total", "first_failure"}], "selected", "message"} for `pod`
    against the scheduler's current cluster state (nothing is bound); "waiting": why the pod does not enter a
    scheduling cycle at all (a PreEnqueue plugin holds it back, its PodGroup is missing), when the caller says so:
    the nodes are then what its cycle would find once it may go."""
    tensors = scheduler.cluster.tensors
    placer = scheduler.placer_for(pod)
    framework = placer.framework
    # The shape as the pod itself reads it (a shape's first pod may differ in what InterPodAffinity or default
    # spreading reads of the pod: Framework.split_run).
    shape = framework.split_run(scheduler.shape_of(pod), [pod], scheduler.cluster)[0][0]
    p, ev, chosen = placer.evaluate(shape, advance=False)
    codes = {k: np.asarray(v) for k, v in ev.codes.items()}
    payloads = {k: np.asarray(v) for k, v in ev.payloads.items()}
    feasible = np.asarray(ev.feasible)
    first = ev.first_failed()
    outside = np.asarray(ev.outside) if ev.outside is not None else np.zeros(len(first), bool)
    raw = {k: np.asarray(v) for k, v in ev.raw.items()}
    normalized = {k: np.asarray(v) for k, v in ev.normalized.items()}
    total = np.asarray(ev.total) if ev.total is not None else None
    skipped_scores = [plugin.name for plugin, point in p.skipped if point == "preScore"]
    zero_scores = [plugin.name for plugin, point in p.skipped if point == "score"]
    states = {plugin.name: state for plugin, state in p.filters}
    nodes = []
    for i, name in enumerate(tensors.nodes.names):
        filters = {}
        for plugin in ev.filters:
            code = int(codes[plugin][i])
            filters[plugin] = {"status": CODE_NAMES[code], "reasons": []}
            if code == ERROR:       # the payload indexes the plugin's error messages, not its reasons
                payload = int(payloads[plugin][i])
                filters[plugin]["reasons"] = [framework.plugin(plugin).filter_errors(states[plugin])[payload]]
            elif code != SUCCESS:
                payload = int(payloads[plugin][i])
                filters[plugin]["reasons"] = framework.plugin(plugin).reasons(payload, tensors)
                filters[plugin].update(framework.plugin(plugin).explain_detail(payload, tensors))
        failing = ev.filters[first[i]] if first[i] >= 0 else None
        if ev.prefilter_message is not None:
            # A PreFilter rejected the pod: every node has that plugin's status, as upstream's diagnosis records it
            # (no Filter ran).
            failing = ev.rejected_by or ev.narrowing[-1]
            filters = {failing: {"status": "UnschedulableAndUnresolvable", "reasons": [ev.prefilter_message]}}
        elif outside[i]:
            failing = ev.narrowing[0]
            filters = {failing: {"status": "UnschedulableAndUnresolvable", "reasons": [outside_reason(ev.narrowing)]}}
        entry = {"name": name, "filters": filters, "scores": {}, "total": None, "first_failure": failing}
        if feasible[i] and total is not None:
            entry["scores"] = {plugin.name: {"raw": int(raw[plugin.name][i]), "normalized": int(normalized[plugin.name][i])}
                               for plugin, _, _ in p.scores}
            # Score plugins whose PreScore skipped the pod add nothing (0), as upstream.
            entry["scores"].update({name: {"raw": 0, "normalized": 0, "skipped": True} for name in skipped_scores})
            entry["scores"].update({name: {"raw": 0, "normalized": 0} for name in zero_scores})
            entry["total"] = int(total[i])
        nodes.append(entry)
    report = {"pod": pod.key, "profile": placer.profile.scheduler_name, "nodes": nodes,
              "selected": tensors.nodes.names[chosen] if chosen >= 0 else None,
              "message": placer.message(ev) if chosen < 0 else None,
              "weights": {**p.weights, **{name: framework.weights.get(name, 1) for name in zero_scores}},
              "warnings": list(shape.unmodelled)}
    if waiting is not None:
        report["waiting"] = waiting
    if chosen < 0 and ev.error is None:
        preemption = explain_preemption(scheduler, placer, pod, p, ev)
        if preemption is not None:
            report["preemption"] = preemption
    return report


def explain_preemption(scheduler: Scheduler, placer, pod: Pod, p, ev) -> dict | None:
    """What PostFilter (preemption) would do for a pod no node fits, as a what-if (nothing nominated or evicted):
    {"node", "victims": [{"pod", "priority", "gpus", "hours_run", "gpu_hours"}], "at_permit", "spared": [{"pod",
    "why"}], "gpu_hours_lost", "message"} (`at_permit`: the victims waiting at Permit, which preemption would preempt
    there rather than evict); None when the profile has no PostFilter plugin. `spared` lists the other pods
    on the chosen node and why each stays."""
    state = scheduler.rng.bit_generator.state
    try:
        outcome = scheduler.preemption.what_if(placer, pod, p, ev)
    finally:
        scheduler.rng.bit_generator.state = state
    if outcome is None:
        return None
    if outcome.success is None:
        return {"node": None, "victims": [], "at_permit": [], "gangs_broken": [], "spared": [],
                "gpu_hours_lost": 0.0, "message": outcome.message}
    node, victims = outcome.nominate, list(outcome.success.victims)
    cluster = scheduler.cluster
    priority = cluster.priority(pod)
    gone = {v.key for v in victims}
    node_id = cluster.tensors.node_index[node]
    spared = []
    for other, at in cluster.tensors.live_bound():
        if at != node_id or other.key in gone:
            continue
        theirs = cluster.priority(other)
        why = (f"priority {theirs} is not lower than the preemptor's {priority}" if theirs >= priority
               else "reprieved: the preemptor still fits with it")
        spared.append({"pod": other.key, "priority": theirs, "why": why})
    return {"node": node, **losses(scheduler, victims), "spared": spared, "message": ""}


def losses(scheduler: Scheduler, victims: list[Pod]) -> dict:
    """{"victims": victim_cost of each, "at_permit": the victims waiting at Permit (preempted there, not evicted),
    "gangs_broken": [{"group", "pods", "gpu_hours"}], "gpu_hours_lost"}. A gang (minCount > 1) that loses any
    bound member loses the work of all its bound members, so its GPU-hours count whole, once; a member waiting at
    Permit has done no work, and its gang keeps what runs."""
    costs = [victim_cost(scheduler, v) for v in victims]
    waiting = scheduler.permit.waiting_keys()
    at_permit = [v.key for v in victims if v.key in waiting]
    broken: dict[str, GroupState] = {}
    for v in victims:
        gs = scheduler.groups.group_of(v)[0] if v.spec.scheduling_group or v.spec.workload_ref else None
        if gs is not None and gs.min_count > 1 and v.key not in waiting:
            broken[gs.key] = gs
    def gpu_hours(pods):
        return sum(g * h for g, h in (gpu_time(scheduler, p) for p in pods))

    gangs, counted, total = [], set(), 0.0
    for key, gs in broken.items():
        members = [m for m in (scheduler.cluster.tensors.pod_of(k) for k in sorted(gs.bound)) if m is not None]
        gangs.append({"group": key, "pods": len(members), "gpu_hours": round(gpu_hours(members), 6)})
        counted.update(m.key for m in members)
        total += gpu_hours(members)
    total += gpu_hours([v for v in victims if v.key not in counted])
    return {"victims": costs, "at_permit": at_permit, "gangs_broken": gangs, "gpu_hours_lost": round(total, 6)}


def gpu_time(scheduler: Scheduler, pod: Pod) -> tuple[float, float]:
    """(GPUs the pod holds: whole GPUs requested, or its device-level share count x milli / 1000; hours since its
    start, none when unset)."""
    share = device_request(pod)
    gpus = share.count * share.milli / 1000 if share is not None else pod_requests(pod).get(GPU, 0)
    start = scheduler.start_of(pod)
    return gpus, (0.0 if np.isnan(start) else max(0.0, (scheduler.now - start) / 3600))


def victim_cost(scheduler: Scheduler, pod: Pod) -> dict:
    """A victim's priority and the GPU-hours its eviction throws away."""
    gpus, hours = gpu_time(scheduler, pod)
    return {"pod": pod.key, "priority": scheduler.cluster.priority(pod), "gpus": gpus, "hours_run": round(hours, 6),
            "gpu_hours": round(gpus * hours, 6)}


TOP_NODES = 5


NO_VERDICT = "no verdict: the scheduling cycle failed with the error above"


def _node_line(report: dict, node: dict) -> str:
    if node["total"] is None:
        failing = node["first_failure"]
        if failing is None:          # neither rejected nor scored: a plugin's error ended the cycle
            return f"  {node['name']}: {NO_VERDICT}"
        detail = node["filters"][failing].get("taint")
        return (f"  {node['name']}: rejected by {failing}: " + "; ".join(node["filters"][failing]["reasons"])
                + (f" ({detail})" if detail else ""))
    weights = report["weights"]
    parts = ", ".join(f"{k} skipped" if v.get("skipped") else f"{k} {v['raw']}->{v['normalized']}x{weights[k]}"
                      for k, v in node["scores"].items())
    return f"  {node['name']}: total {node['total']} ({parts})"


def render_text(report: dict, all_nodes: bool = False) -> str:
    """The chosen node, the best-scored nodes and a count of the reasons the others were rejected; every node
    with `all_nodes`."""
    lines = [f"pod {report['pod']}: " + (f"selected {report['selected']}" if report["selected"]
                                         else report["message"])]
    if "waiting" in report:
        lines = [f"pod {report['pod']}: waits before scheduling: {report['waiting']}",
                 "  once it may go: " + lines[0].partition(": ")[2]]
    for w in report["warnings"]:
        lines.append(f"  warning: {w}")
    nodes = report["nodes"]
    if all_nodes:
        lines += [_node_line(report, node) for node in nodes]
    else:
        feasible = sorted((n for n in nodes if n["total"] is not None), key=lambda n: -n["total"])
        if feasible:
            lines.append(f"  {len(feasible)} of {len(nodes)} nodes fit; the best {min(TOP_NODES, len(feasible))}:")
            lines += [_node_line(report, node) for node in feasible[:TOP_NODES]]
        failed = [n for n in nodes if n["total"] is None and n["first_failure"] is not None]
        rejected = Counter(f"{n['first_failure']}: {reason}" for n in failed
                           for reason in n["filters"][n["first_failure"]]["reasons"])
        if rejected:
            lines.append(f"  {len(failed)} nodes rejected:")
            lines += [f"    {count:>6} {reason}" for reason, count in rejected.most_common()]
        undecided = sum(n["total"] is None and n["first_failure"] is None for n in nodes)
        if undecided:
            lines.append(f"  {undecided} nodes: {NO_VERDICT}")
        if len(nodes) > len(feasible[:TOP_NODES]):
            lines.append("  (--all-nodes lists every node)")
    pre = report.get("preemption")
    if pre is not None:
        lines.extend(render_preemption(pre))
    return "\n".join(lines)


def render_preemption(pre: dict) -> list[str]:
    if pre["node"] is None and not pre["victims"]:
        return [f"  preemption would not help: {pre['message']}"]
    where = f" on {pre['node']}" if pre["node"] else f" in {pre['domain']}" if pre.get("domain") else ""
    at_permit = set(pre.get("at_permit", ()))
    also = f" and preempt {len(at_permit)} waiting at Permit" if at_permit else ""
    lines = [f"  preemption{where} would evict {len(pre['victims']) - len(at_permit)} pods{also}, "
             f"{pre['gpu_hours_lost']:g} GPU-hours lost:"]
    lines += [f"    preempt {v['pod']} waiting at Permit (priority {v['priority']}, {v['gpus']:g} GPUs)"
              if v["pod"] in at_permit else
              f"    evict {v['pod']} (priority {v['priority']}, {v['gpus']:g} GPUs x {v['hours_run']:.2f} h)"
              for v in pre["victims"]]
    lines += [f"    gang {g['group']} loses the work of its {g['pods']} pods: {g['gpu_hours']:g} GPU-hours"
              for g in pre["gangs_broken"]]
    lines += [f"    spare {s.get('pod') or s['unit']}: {s['why']}" for s in pre["spared"]]
    if pre.get("spared_count", 0) > len(pre["spared"]):
        lines.append(f"    ... and {pre['spared_count'] - len(pre['spared'])} more lower-priority units spared")
    return lines


def explain_group(scheduler: Scheduler, key: str) -> dict:
    """Why a PodGroup waits (or where it would go): quorum, or a what-if PodGroup cycle against the current
    state, undone afterwards. {"podgroup", "members", "bound", "min_count", "placeable", "failed": [{"pods",
    "message"}], "infeasible", "message"}."""
    gs = scheduler.groups.states.get(key)
    if gs is None:
        raise KeyError(f"PodGroup {key}: no pods of this group are known to the scheduler")
    members = gs.present
    report = {"podgroup": key, "members": members, "bound": len(gs.bound), "waiting": len(gs.waiting),
              "min_count": gs.min_count, "gang": gs.gang, "placeable": None, "failed": [], "infeasible": None,
              "condition": gs.condition}
    head = f"PodGroup {key}: "
    if not gs.pending:
        held = f", {len(gs.held)} held at PreEnqueue" if gs.held else ""
        report["message"] = head + f"{len(gs.bound)}/{members} pods bound, none pending{held}"
        return report
    if not gs.quorum():
        report["message"] = head + (f"waiting for minCount pods: {members} of {gs.min_count} present "
                                    f"({QUORUM_MESSAGE})")
        return report
    placer = scheduler.placer_for_group(gs)
    rng_state, next_start, post_filter = scheduler.rng.bit_generator.state, placer.next_start, placer.post_filter
    mark = scheduler.cluster.tensors.log_mark()
    placer.post_filter = None          # a what-if: no preemption (it would nominate and evict); Filter's reasons
    try:
        attempt = scheduler.group_cycle.group_attempt(gs)
    finally:
        placer.post_filter = post_filter
    placer.undo(attempt.placed, mark)
    scheduler.rng.bit_generator.state, placer.next_start = rng_state, next_start
    placed = attempt.placed_count + attempt.placed_elsewhere
    placeable = len(gs.bound) + placed
    report.update(placeable=placeable, infeasible=attempt.infeasible,
                  failed=[{"pods": [p.key for p in pods], "message": message} for pods, message, _ in attempt.failed])
    count = f"{placeable}/{members} pods placeable" + (f" (minCount {gs.min_count})" if gs.min_count != members else "")
    parts = [f"{len(pods)} pods: {message}" for pods, message, _ in attempt.failed]
    if attempt.infeasible:
        parts.append(attempt.infeasible)
    if attempt.group_message:        # a topology constraint no placement satisfies (the first one's pods above)
        parts.append(attempt.group_message)
    if attempt.error:
        parts.append(attempt.error)
    report["message"] = head + "; ".join([count, *parts])
    if attempt.infeasible or attempt.group_message:
        report["preemption"] = explain_group_preemption(scheduler, gs)
    return report


def explain_group_preemption(scheduler: Scheduler, gs, listed: int = 20) -> dict:
    """What workload-aware preemption would do for a PodGroup whose cycle fails, as a what-if: the victims with
    what each loses, and the lower-priority units it would spare (the first `listed`, and how many)."""
    outcome = scheduler.workload_preemption.what_if(gs)
    if isinstance(outcome, str):
        return {"node": None, "victims": [], "at_permit": [], "gangs_broken": [], "spared": [],
                "gpu_hours_lost": 0.0, "message": outcome or "workload aware preemption is disabled"}
    result, dry_run = outcome.result, outcome.dry_run
    gone = {p.key for p in result.victims}
    priority = pod_group_priority(gs.group, scheduler.cluster.priority_classes)
    spared = [u for u in dry_run.units_below(priority) if not any(p.key in gone for p in u.pods)]
    return {"node": None, "domain": outcome.domain, **losses(scheduler, list(result.victims)),
            "spared": [{"unit": u.key, "priority": u.priority,
                        "why": "reprieved: the group still schedules with it"} for u in spared[:listed]],
            "spared_count": len(spared), "message": ""}
