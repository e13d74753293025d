"""explain: why a pod would land where it lands, node by node, plugin by plugin.

Every filter that runs for the pod is evaluated on every node (upstream stops at the first failure; the
node's `first_failure` names that plugin, and only its reasons count in the message). Scores are reported for
feasible nodes only, as upstream scores only those.
"""
from __future__ import annotations

import numpy as np

from ..cluster_models import Pod
from ..kernels.status import CODE_NAMES, SUCCESS
from .messages import first_failures, outside_reason
from .podgroups import QUORUM_MESSAGE
from .scheduler import Scheduler


def explain_pod(scheduler: Scheduler, pod: Pod) -> dict:
    """{"nodes": [{"name", "filters", "scores", "total", "first_failure"}], "selected", "message"} for `pod`
    against the scheduler's current cluster state (nothing is bound)."""
    tensors = scheduler.cluster.tensors
    placer = scheduler.placer_for(pod)
    framework = placer.framework
    shape = scheduler.shape_of(pod)
    p, ev, chosen = placer.evaluate(shape, advance=False)
    codes = {k: np.asarray(v) for k, v in ev.codes.items()}
    payloads = {k: np.asarray(v) for k, v in ev.payloads.items()}
    feasible = np.asarray(ev.feasible)
    first = first_failures(ev.filters, codes, tensors.nodes.size)
    outside = np.asarray(ev.outside) if ev.outside is not None else np.zeros(len(first), bool)
    raw = {k: np.asarray(v) for k, v in ev.raw.items()}
    normalized = {k: np.asarray(v) for k, v in ev.normalized.items()}
    total = np.asarray(ev.total) if ev.total is not None else None
    scoring = {plugin.name for plugin in framework.at("score")}
    skipped_scores = list(dict.fromkeys(plugin.name for plugin in p.skipped if plugin.name in scoring
                                        and plugin.name not in {q.name for q, _, _ in p.scores}))
    nodes = []
    for i, name in enumerate(tensors.nodes.names):
        filters = {}
        for plugin in ev.filters:
            code = int(codes[plugin][i])
            filters[plugin] = {"status": CODE_NAMES[code], "reasons": []}
            if code != SUCCESS:
                payload = int(payloads[plugin][i])
                filters[plugin]["reasons"] = framework.plugin(plugin).reasons(payload, tensors)
                filters[plugin].update(framework.plugin(plugin).explain_detail(payload, tensors))
        if outside[i]:
            filters = {ev.narrowing[0]: {"status": "UnschedulableAndUnresolvable",
                                         "reasons": [outside_reason(ev.narrowing)]}}
        entry = {"name": name, "filters": filters, "scores": {}, "total": None,
                 "first_failure": ev.narrowing[0] if outside[i] else (ev.filters[first[i]] if first[i] >= 0 else None)}
        if feasible[i] and total is not None:
            entry["scores"] = {plugin.name: {"raw": int(raw[plugin.name][i]), "normalized": int(normalized[plugin.name][i])}
                               for plugin, _, _ in p.scores}
            # Score plugins whose PreScore skipped the pod add nothing (0), as upstream.
            entry["scores"].update({name: {"raw": 0, "normalized": 0, "skipped": True} for name in skipped_scores})
            entry["total"] = int(total[i])
        nodes.append(entry)
    return {"pod": pod.key, "profile": placer.profile.scheduler_name, "nodes": nodes,
            "selected": tensors.nodes.names[chosen] if chosen >= 0 else None,
            "message": placer.message(ev) if chosen < 0 else None,
            "weights": p.weights, "warnings": list(shape.unmodelled)}


def render_text(report: dict) -> str:
    lines = [f"pod {report['pod']}: " + (f"selected {report['selected']}" if report["selected"]
                                         else report["message"])]
    for w in report["warnings"]:
        lines.append(f"  warning: {w}")
    for node in report["nodes"]:
        if node["total"] is None:
            failing = node["first_failure"]
            detail = node["filters"][failing].get("taint")
            lines.append(f"  {node['name']}: rejected by {failing}: " + "; ".join(node["filters"][failing]["reasons"])
                         + (f" ({detail})" if detail else ""))
        else:
            parts = ", ".join(f"{k} {v['raw']}->{v['normalized']}x{report['weights'][k]}"
                              for k, v in node["scores"].items())
            lines.append(f"  {node['name']}: total {node['total']} ({parts})")
    return "\n".join(lines)


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
    return report
