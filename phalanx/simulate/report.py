"""The simulator's results as a comparison table, CSV or Parquet rows, and plots (matplotlib, the `viz` extra)."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .engine import Ledger, SimResult

_COLUMNS = (("policy", "policy", "{}"), ("utilization", "util", "{:.1%}"),
            ("gpu_h_running", "running GPU-h", "{:,.0f}"), ("gpu_h_incomplete", "incomplete GPU-h", "{:,.0f}"),
            ("gpu_h_permit", "at Permit GPU-h", "{:,.0f}"), ("gpu_h_stranded", "stranded GPU-h", "{:,.0f}"),
            ("preemptions", "preempted pods", "{:,}"), ("destroyed_gpu_h", "destroyed GPU-h", "{:,.1f}"),
            ("nodes_added", "nodes added", "{:,}"),
            ("training_finished", "training done", "{:,}"), ("training_pending_p50_s", "train wait p50 s", "{}"),
            ("training_pending_p95_s", "p95 s", "{}"), ("training_pending_p99_s", "p99 s", "{}"),
            ("wall_s", "wall s", "{:.1f}"), ("events_per_s", "events/s", "{:,.0f}"))


def comparison_table(rows: list[dict]) -> str:
    """One line per run (SimResult.row()): utilization, GPU-hours by state, preemption cost, training wait
    quantiles, speed; the scenario and seed lead when the rows have several."""
    lead = tuple(c for c in (("scenario", "scenario", "{}"), ("seed", "seed", "{}"))
                 if len({row.get(c[0]) for row in rows}) > 1)
    columns = lead + _COLUMNS
    header = [title for _, title, _ in columns]
    cells = [[fmt.format(row[key]) if row.get(key) is not None else "-" for key, _, fmt in columns]
             for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.ljust(w) if i < len(lead) + 1 else c.rjust(w) for i, (c, w) in enumerate(zip(cell, widths)))
              for cell in cells]
    return "\n".join(lines)


def write_rows(rows: list[dict], path: Path) -> None:
    """Rows (SimResult.row()) to `path`: CSV, or Parquet when it ends in .parquet (needs pyarrow)."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    if path.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError("writing Parquet needs pyarrow: pip install pyarrow (or write .csv)") from None
        pq.write_table(pa.table({c: [row.get(c) for row in rows] for c in columns}), path)
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def plot(results: list[SimResult], out_dir: Path) -> list[Path]:
    """utilization.png (running GPUs over time per policy), pending_cdf.png (training jobs' time to start),
    fragmentation.png (per rack, idle GPUs on partly used nodes over time, one panel per policy)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    fig, ax = plt.subplots(figsize=(9, 4))
    running = Ledger.STATES.index("running")
    for r in results:
        if r.samples:
            t = np.array([s[0] for s in r.samples]) / 3600
            ax.plot(t, np.array([s[1][running] for s in r.samples]) / max(r.gpus * 1000, 1), label=r.policy)
    ax.set(xlabel="hours", ylabel="GPUs running / all GPUs", ylim=(0, 1), title="Utilization over time")
    ax.legend()
    written.append(_save(fig, out_dir / "utilization.png"))

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in results:
        waits = np.sort(np.array(r.pending_times.get("training", [])))
        if len(waits):
            ax.step(waits / 60, np.arange(1, len(waits) + 1) / len(waits), where="post", label=r.policy)
    ax.set(xlabel="minutes from arrival to start", ylabel="fraction of training jobs started", xscale="symlog",
           title="Training jobs: pending time CDF")
    ax.legend()
    written.append(_save(fig, out_dir / "pending_cdf.png"))

    fig, axes = plt.subplots(len(results), 1, figsize=(9, 2.2 * len(results) + 0.5), squeeze=False)
    for ax, r in zip(axes[:, 0], results):
        if r.rack_samples:
            grid = np.stack(r.rack_samples, axis=1) / 1000      # milli-GPUs -> GPUs
            hours = r.samples[-1][0] / 3600 if r.samples else 0
            image = ax.imshow(grid, aspect="auto", origin="lower", extent=(0, hours, 0, len(r.racks)),
                              cmap="magma")
            fig.colorbar(image, ax=ax, label="idle GPUs")
        ax.set(title=f"{r.policy}: idle GPUs on partly used nodes, per rack", xlabel="hours", ylabel="rack")
    written.append(_save(fig, out_dir / "fragmentation.png"))
    return written


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path
