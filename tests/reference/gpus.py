"""Plain per-node, per-device reference for the GPU filter, device selection and the GPU-cluster score policies.

Written for clarity from the trace simulator's Go source (hkust-adsl/kubernetes-scheduler-simulator:
pkg/type/open-gpu-share/cache/gpunodeinfo.go, pkg/simulator/plugin/*_score.go, pkg/utils/frag.go,
pkg/type/resource.go), one node and one device at a time, with Python floats (IEEE float64, the same operations
in the same order as the Go code). Independent of phalanx.kernels.

A node is a dict: {"free": [milli free per device], "models": [model name per device], "cpu_left": int,
"tags": {affinity tag: pods}}; a pod: {"cpu": int, "count": int, "milli": int, "models": [allowed names]}.
"""
from __future__ import annotations

import math

MILLI = 1000
MAX_SCORE = 100


def device_ok(node, d, pod) -> bool:
    allowed = [m for m in pod["models"] if m]
    return node["free"][d] >= pod["milli"] and (not allowed or node["models"][d] in allowed)


def fits(node, pod) -> bool:
    if pod["count"] == 0:
        return True
    n = 0
    for d in range(len(node["free"])):
        if device_ok(node, d, pod):
            n += 1
    return n >= pod["count"]


def pick_devices(node, pod, order="best") -> list[int]:
    """Devices the pod gets: tightest (best) / loosest (worst) fitting device first, lower index on ties."""
    chosen = []
    for _ in range(pod["count"]):
        pick = None
        for d in range(len(node["free"])):
            if d in chosen or not device_ok(node, d, pod):
                continue
            if pick is None:
                pick = d
            elif order == "best" and node["free"][d] < node["free"][pick]:
                pick = d
            elif order == "worst" and node["free"][d] > node["free"][pick]:
                pick = d
        if pick is None:
            break
        chosen.append(pick)
    return sorted(chosen)


def bestfit(node, pod) -> int:
    free_cpu, free_gpu = float(node["cpu_left"]), float(sum(node["free"]))
    req_cpu, req_gpu = float(pod["cpu"]), float(pod["count"] * pod["milli"])
    score = 0.0
    score += (free_cpu - req_cpu) / 128000.0 * 0.5
    score += (free_gpu - req_gpu) / 8000.0 * 0.5
    return int((1.0 - score) * 100.0)


def normalize(scores: list[int]) -> list[int]:
    hi, lo = max(scores), min(scores)
    out = []
    for s in scores:
        out.append(0 if hi == lo else (s - lo) * 100 // (hi - lo))
    return out


def dotprod(node, pod) -> int:
    if node["cpu_left"] < pod["cpu"]:
        return 0
    node_vec = [node["cpu_left"] / 128000.0, sum(node["free"]) / 8000.0]
    pod_vec = [pod["cpu"] / 128000.0, (pod["count"] * pod["milli"]) / 8000.0]
    dot = 0.0
    for a, b in zip(node_vec, pod_vec):
        dot += a * b
    cur = 1 - dot / 2
    return int(100.0 * cur)


def gpupacking(node, pod) -> int:
    if pod["milli"] <= 0:
        return 0
    free = node["free"]
    fully = sum(1 for f in free if f == MILLI)
    if fully == len(free):
        return max(MAX_SCORE // 3 - fully, fully)
    order = sorted(range(len(free)), key=lambda d: (free[d], d))
    need, used, fully_used = pod["count"], [], 0
    for d in order:
        if need == 0:
            break
        if pod["milli"] <= free[d]:
            need -= 1
            used.append(d)
            if free[d] == MILLI:
                fully_used += 1
    if fully_used > 0:
        return max(MAX_SCORE // 2 - fully_used, MAX_SCORE // 3)
    ratio = 0
    for d in used:
        ratio += free[d] * 100 // MILLI
    return max(MAX_SCORE - ratio // 10, MAX_SCORE // 2)


def pod_tag(pod):
    if pod["count"] == 0:
        return None
    if pod["count"] == 1 and pod["milli"] < MILLI:
        return "share-gpu"
    return f"{pod['count']}-gpu"


def gpuclustering(node, pod) -> int:
    tag = pod_tag(pod)
    if tag is None:
        return 0
    tags = {t: c for t, c in node["tags"].items() if c > 0}
    left = sum(node["free"])
    part = int((25 * (8000 - left)) / 8000)     # Go integer division truncates toward zero
    if tags.get(tag, 0) > 0:
        return part + (75 if len(tags) == 1 else 50)
    return part + (25 if len(tags) == 0 else 0)


def node_model(node) -> str:
    return node["models"][0] if node["models"] else ""


def frag_class(node, t) -> str:
    """GetNodePodFrag for typical pod t = (cpu, milli, count, spec)."""
    cpu, milli, count, spec = t
    if milli == 0:
        return "xl" if node["cpu_left"] >= cpu else "xr"
    allowed = [m for m in spec.split("|") if m]
    if allowed and node_model(node) not in allowed:
        return "na"
    room, need = False, count
    for f in node["free"]:
        if f >= milli:
            need -= 1
            if need <= 0:
                room = True
                break
    if room:
        return "q3" if node["cpu_left"] >= cpu else "q4"
    return "q2" if node["cpu_left"] >= cpu else "q1"


def node_frag(node, typical) -> float:
    """NodeGpuShareFragAmountScore. typical: [((cpu, milli, count, spec), freq), ...]."""
    data = {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0, "xl": 0.0, "xr": 0.0, "na": 0.0}
    left_total = sum(node["free"])
    for t, freq in typical:
        cls = frag_class(node, t)
        if cls == "q3":
            frag_milli = sum(f for f in node["free"] if f < t[1])
            data["q2"] += freq * float(frag_milli)
            data["q3"] += freq * float(left_total - frag_milli)
        else:
            data[cls] += freq * float(left_total)
    out = 0.0
    for cls in ("q1", "q2", "q3", "q4", "xl", "xr", "na"):
        if cls != "q3":
            out += data[cls]
    return out


def _sigmoid_score(before: float, after: float) -> int:
    return int(1.0 / (1.0 + math.exp(-((before - after) / 1000))) * 100.0)


def fgd(node, pod, typical) -> tuple[int, int]:
    """(score, device) -- device -1 unless the pod takes a fraction of one GPU."""
    before = node_frag(node, typical)
    if pod["count"] == 1 and pod["milli"] < MILLI:
        score, device = 0, -1
        for d in range(len(node["free"])):
            if device_ok(node, d, pod):
                after_node = dict(node, free=list(node["free"]), cpu_left=node["cpu_left"] - pod["cpu"])
                after_node["free"][d] -= pod["milli"]
                s = _sigmoid_score(before, node_frag(after_node, typical))
                if device == -1 or s > score:
                    score, device = s, d
        return score, device
    after_node = dict(node, free=list(node["free"]), cpu_left=node["cpu_left"] - pod["cpu"])
    # NodeResource.Sub: least free first (stable), each device with room takes one GPU's milli.
    need = pod["count"]
    for d in sorted(range(len(node["free"])), key=lambda d: (node["free"][d], d)):
        if need == 0:
            break
        if device_ok(node, d, pod):
            after_node["free"][d] -= pod["milli"]
            need -= 1
    return _sigmoid_score(before, node_frag(after_node, typical)), -1


def select_node(scores: list[int], feasible: list[bool]) -> int:
    """Highest score among feasible nodes, the first (smallest name = lowest index) on ties; -1 if none."""
    best = -1
    for n, ok in enumerate(feasible):
        if ok and (best == -1 or scores[n] > scores[best]):
            best = n
    return best


def replay(nodes, pods, order, policy, typical, pod_limit=1001):
    """Pod-by-pod replay (no departures, failed pods dropped). nodes: [{"name", "cpu", "mem", "models": [...]}]
    (every device idle at the start); pods: [{"cpu", "mem", "count", "milli", "models"}]; order: pod indices.
    Ties go to the smallest node name. Returns [(node name or None, [devices])] per arrival."""
    state = [{"name": n["name"], "free": [MILLI] * len(n["models"]), "models": list(n["models"]),
              "cpu_left": n["cpu"], "mem_left": n["mem"], "pods": 0, "tags": {}} for n in nodes]
    state.sort(key=lambda s: s["name"])
    out = []
    for i in order:
        pod = dict(pods[i])
        pod["cpu"] = pod["cpu"] or 100
        feasible = [s["cpu_left"] >= pods[i]["cpu"] and s["mem_left"] >= pod["mem"] and s["pods"] + 1 <= pod_limit
                    and fits(s, pod) for s in state]
        if not any(feasible):
            out.append((None, []))
            continue
        fgd_dev = [-1] * len(state)
        scores = [0] * len(state)
        for n, s in enumerate(state):
            if not feasible[n]:
                continue
            if policy == "bestfit":
                scores[n] = bestfit(s, pod)
            elif policy == "dotprod":
                scores[n] = dotprod(s, pod)
            elif policy == "gpupacking":
                scores[n] = gpupacking(s, pod)
            elif policy == "gpuclustering":
                scores[n] = gpuclustering(s, pod)
            elif policy == "fgd":
                scores[n], fgd_dev[n] = fgd(s, pod, typical)
        if policy == "bestfit":
            idx = [n for n in range(len(state)) if feasible[n]]
            norm = normalize([scores[n] for n in idx])
            for n, v in zip(idx, norm):
                scores[n] = v
        n = select_node(scores, feasible)
        s = state[n]
        if pod["count"] == 1 and pod["milli"] < MILLI and policy == "fgd":
            devs = [fgd_dev[n]]
        else:
            devs = pick_devices(s, pod, "best")
        for d in devs:
            s["free"][d] -= pod["milli"]
        s["cpu_left"] -= pods[i]["cpu"]
        s["mem_left"] -= pod["mem"]
        s["pods"] += 1
        tag = pod_tag(pod)
        if tag is not None:
            s["tags"][tag] = s["tags"].get(tag, 0) + 1
        out.append((s["name"], devs))
    return out


def take(node, pod) -> list[int]:
    """A pod placed on `node` takes its devices (best fit, pick_devices) and their milli; returns the devices."""
    chosen = pick_devices(node, pod, "best")
    for d in chosen:
        node["free"][d] -= pod["milli"]
    return chosen


# -- whole nvidia.com/gpu pods next to GPU shares (sched/gpushare.py) --------------------------------------------
# A node also carries "whole": the devices its whole-GPU (nvidia.com/gpu) pods hold. They are its lowest-index
# devices that no share uses ("free" counts shares only), so shares see them as full, and a whole-GPU pod fits
# when enough devices are neither used by a share nor held.

def effective_free(node) -> list[int]:
    """Free milli per device with the devices held by whole-GPU pods at 0."""
    out, left = list(node["free"]), node.get("whole", 0)
    for d, f in enumerate(out):
        if left and f == MILLI:
            out[d], left = 0, left - 1
    return out


def share_fits(node, pod) -> bool:
    return fits({"free": effective_free(node), "models": node["models"]}, pod)


def take_share(node, pod) -> list[int]:
    """A share pod takes its devices (best fit among those not held by whole-GPU pods)."""
    chosen = pick_devices({"free": effective_free(node), "models": node["models"]}, pod, "best")
    for d in chosen:
        node["free"][d] -= pod["milli"]
    return chosen


def whole_fits(node, count: int) -> bool:
    """count whole devices that no share uses and no whole-GPU pod holds."""
    return sum(1 for f in effective_free(node) if f == MILLI) >= count
