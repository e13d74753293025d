"""`phalanx sweep config.yaml`: scenarios × policies × seeds of the simulator, each run a pure function of its
scenario, policy and seed, fanned out over a local process pool or a Ray cluster, merged into one table.

The config (YAML; field names as below, unknown ones are errors):

    scenarios:                     # one or more synthetic clusters and workloads
      - name: small                # a label for the table
        nodes: 200                 # 8-GPU nodes
        hours: 12
        load: 0.9                  # offered load
        node_failures_per_day: 0   # per node
        repair_hours: 1
    policies: [pod-by-pod, gang]   # default: every policy
    seeds: [0, 1, 2]               # default: [0]

Ray (the optional `dist` extra) was chosen because it is the engine such sweeps already run on, it schedules
Python functions over a cluster with no code change between a laptop and a cluster, and a local instance starts
from the tests; the process pool (standard library) is the default and needs nothing.
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..cluster_models.errors import InputError
from .engine import POLICIES


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    nodes: int = Field(gt=0)
    hours: float = Field(gt=0)
    load: float = Field(default=0.9, gt=0, le=10)
    node_failures_per_day: float = Field(default=0.0, ge=0)
    repair_hours: float = Field(default=1.0, gt=0)


class SweepConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenarios: list[Scenario] = Field(min_length=1)
    policies: list[str] = Field(default_factory=lambda: list(POLICIES))
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)

    @field_validator("policies")
    @classmethod
    def _known(cls, policies: list[str]) -> list[str]:
        for p in policies:
            if p not in POLICIES:
                raise ValueError(f"unknown policy {p!r} (use one of {', '.join(POLICIES)})")
        return policies

    def runs(self) -> list[dict]:
        """Every (scenario, policy, seed) as the plain dict run_one takes, in table order."""
        return [{"scenario": s.model_dump(), "policy": p, "seed": seed}
                for s in self.scenarios for p in self.policies for seed in self.seeds]


def load_sweep(path: Path) -> SweepConfig:
    """The sweep config at `path`; a bad one is an InputError naming the file and the field."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: {exc}") from None
    try:
        return SweepConfig.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise InputError(f"{path}: {where}: {err['msg']}") from None


def run_one(run: dict) -> dict:
    """One simulation from its plain description: the table row (timings included)."""
    from ..cluster_models.generate import generate_nodes
    from .engine import Simulation
    from .workload import generate_jobs
    s, seed = run["scenario"], run["seed"]
    nodes = generate_nodes(s["nodes"], seed=seed, node_type="gpu-8x")
    jobs = generate_jobs(8 * s["nodes"], s["hours"], seed=seed, load=s["load"])
    result = Simulation(nodes, jobs, POLICIES[run["policy"]], hours=s["hours"], seed=seed,
                        node_failures_per_day=s["node_failures_per_day"],
                        repair_s=s["repair_hours"] * 3600).run()
    return {"scenario": s["name"], **result.row()}


def run_sweep(config: SweepConfig, workers: int = 1, ray_address: str | None = None, on_done=None) -> list[dict]:
    """Every run of the sweep, rows in config order: one by one (workers 1), on a process pool, or on Ray
    (`ray_address`: "local" starts one here, else the address of a running cluster)."""
    runs = config.runs()
    if ray_address is not None:
        return _on_ray(runs, ray_address, on_done)
    if workers <= 1:
        rows = []
        for run in runs:
            rows.append(run_one(run))
            if on_done:
                on_done()
        return rows
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_one, run) for run in runs]
        rows = []
        for f in futures:
            rows.append(f.result())
            if on_done:
                on_done()
        return rows


def _on_ray(runs: list[dict], address: str, on_done) -> list[dict]:
    try:
        import ray
    except ImportError:
        raise InputError("--ray: needs Ray: pip install 'phalanx[dist]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    try:
        remote = ray.remote(run_one)
        refs = [remote.remote(run) for run in runs]
        rows = []
        for ref in refs:
            rows.append(ray.get(ref))
            if on_done:
                on_done()
        return rows
    finally:
        if started:
            ray.shutdown()

