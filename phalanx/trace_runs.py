"""`phalanx trace alibaba`: load the trace, replay it, write the JSON / CSV / plot / multi-seed table."""
from __future__ import annotations

import csv
import statistics
from collections.abc import Callable
from pathlib import Path

from .cluster_models.alibaba import NODE_LIST, load_nodes, load_pods, resolve
from .cluster_models.errors import InputError
from .simulate.alibaba import REPLAY_POLICIES as POLICIES
from .simulate.alibaba import ReplayResult, replay

# Unallocated GPU % at 100% arrived GPU demand on openb_pod_list_default, mean of seeds 42-51, computed from the
# simulator repository's experiments/analysis/expected_results/analysis_allo_discrete.csv (the data behind the
# paper's Fig. 7): 100 - allocation ratio at arrival bucket 100.
SIMULATOR_EXPECTED_UNALLOCATED = {"random": 13.70, "dotprod": 9.38, "gpuclustering": 8.35, "gpupacking": 8.22,
                                  "bestfit": 7.14, "fgd": 4.77}


def parse_seeds(text: str) -> list[int]:
    """"0-9" -> 0..9; "1,5,7" -> [1, 5, 7]; "42" -> [42]."""
    out: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part[1:]:
                lo, hi = part.split("-", 1) if not part.startswith("-") else (part, "")
                a, b = int(lo), int(hi)
                if b < a:
                    raise ValueError
                out.extend(range(a, b + 1))
            elif part:
                out.append(int(part))
    except ValueError:
        raise InputError(f"--seeds: expected a range like 0-9 or a list like 1,5,7 (got {text!r})") from None
    if not out:
        raise InputError(f"--seeds: no seeds in {text!r}")
    return out


def load(pods: str, nodes: str = NODE_LIST, data_dir: str | None = None):
    return load_nodes(resolve(nodes, data_dir)), load_pods(resolve(pods, data_dir))


def result_json(r: ReplayResult) -> dict:
    return {"trace": r.trace, "policy": r.policy, "seed": r.seed, "pods": r.pods, "placed": r.placed,
            "seconds": round(r.seconds, 4), "alloc_by_arrival": r.alloc_by_arrival()}


def write_csv(r: ReplayResult, pods, path: Path) -> None:
    """One row per arrival: step, pod, node (empty: dropped), GPU devices, arrived and allocated milli-GPU and %."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cap = r.gpu_capacity_milli
    node_names = r.node_names
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "pod", "node", "gpus", "arrived_gpu_milli", "used_gpu_milli", "arrived_pct", "alloc_pct"])
        for k in range(r.pods):
            n = int(r.node_of[k])
            w.writerow([k + 1, pods.names[int(r.pod_rows[k])], node_names[n] if n >= 0 else "",
                        "-".join(str(d) for d in r.devices_of[k]), int(r.arrived_milli[k + 1]),
                        int(r.used_milli[k + 1]), round(100 * int(r.arrived_milli[k + 1]) / cap, 3),
                        round(100 * int(r.used_milli[k + 1]) / cap, 3)])


def write_plot(results: list[ReplayResult], path: Path) -> str | None:
    """GPU allocation % against arrived GPU demand %, one line per result. Returns a message if not written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"plot not written ({path}): matplotlib is not installed (pip install 'phalanx[viz]')"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in results:
        a = r.alloc_by_arrival()
        xs = [int(k) for k in a]
        ax.plot(xs, [a[k] for k in a], label=f"{r.policy} (seed {r.seed})")
    ax.plot([0, 130], [0, 130], color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("arrived GPU demand (% of GPU capacity)")
    ax.set_ylabel("GPU allocation ratio (%)")
    ax.set_xlim(0, 130)
    ax.set_ylim(0, 100)
    ax.set_title(results[0].trace if results else "")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None


def table(nodes, pods, trace: str, policies, seeds, tie_break: str = "perm",
          progress: Callable[[], None] | None = None) -> tuple[list[dict], str]:
    """Unallocated GPU % at 100% arrived demand per policy over seeds, as rows and a markdown table; `progress` is
    called after each replay."""
    rows = []
    for policy in policies:
        values, secs = [], []
        for seed in seeds:
            r = replay(nodes, pods, policy, seed, trace=trace, tie_break=tie_break)
            if progress is not None:
                progress()
            values.append(r.unallocated_at(100))
            secs.append(r.seconds)
        rows.append({"policy": policy, "seeds": list(seeds), "unallocated_at_100": values,
                     "mean": round(statistics.mean(values), 2), "std": round(statistics.pstdev(values), 2),
                     "seconds_mean": round(statistics.mean(secs), 3),
                     "simulator_expected": SIMULATOR_EXPECTED_UNALLOCATED.get(policy)
                     if trace == "openb_pod_list_default" else None})
    lines = ["| policy | phalanx mean | std | min | max | simulator expected (seeds 42-51) | s/replay |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        exp = row["simulator_expected"]
        lines.append(f"| {row['policy']} | {row['mean']:.2f} | {row['std']:.2f} | {min(row['unallocated_at_100']):.2f} "
                     f"| {max(row['unallocated_at_100']):.2f} | {'' if exp is None else f'{exp:.2f}'} "
                     f"| {row['seconds_mean']:.2f} |")
    return rows, "\n".join(lines)


__all__ = ["POLICIES", "load", "parse_seeds", "result_json", "table", "write_csv", "write_plot"]
