"""Runs of the simulator described as data: a Scenario (a synthetic cluster and workload, or a window of the Alibaba
trace), a policy and a seed. Each run is a pure function of them (`simulate_one`), so `phalanx simulate` and
`phalanx sweep config.yaml` fan runs out over a local process pool or a Ray cluster and merge one table.

The sweep config (YAML; field names as below, unknown ones are errors):

    scenarios:                     # one or more
      - name: small                # a label for the table
        nodes: 200                 # synthetic: 8-GPU nodes (32 a rack) ...
        load: 0.9                  #   ... and the offered load of the generated jobs
        hours: 12
        node_failures_per_day: 0   # per node
        repair_hours: 1
        autoscale_nodes: 0         # an autoscaler may add this many nodes (simulate/autoscaler.py)
        provision_minutes: 10
        scale_down_minutes: 10
        permit_timeout: 300        # seconds (gang-permit)
      - name: trace-day
        trace: openb_pod_list_default.csv   # or a window of the Alibaba trace (instead of nodes/load)
        trace_nodes: openb_node_list_gpu_node.csv
        day: 130
        hours: 24
        clones: 1
    policies: [pod-by-pod, gang]   # default: every policy; "gang+fgd": with a GPU score policy (engine.SCORES)
    seeds: [0, 1, 2]               # default: [0]

Ray (the optional `dist` extra) was chosen because it is the engine such sweeps already run on, it schedules
Python functions over a cluster with no code change between a laptop and a cluster, and a local instance starts
from the tests; the process pool (standard library) is the default and needs nothing.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..cluster_models.errors import InputError
from ..cluster_models.load import yaml_documents
from .engine import POLICIES, SimResult, policy_named


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")    # numbers finite: an infinite run (hours, failures) never ends
    name: str = "run"
    hours: float = Field(gt=0, allow_inf_nan=False)
    nodes: int | None = Field(default=None, gt=0)
    load: float = Field(default=0.9, gt=0, le=10, allow_inf_nan=False)
    trace: str | None = None
    trace_nodes: str = "openb_node_list_gpu_node.csv"
    data_dir: str | None = None
    day: float = Field(default=130.0, ge=0, allow_inf_nan=False)
    clones: int = Field(default=1, ge=1)
    node_failures_per_day: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    repair_hours: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    autoscale_nodes: int = Field(default=0, ge=0)
    provision_minutes: float = Field(default=10.0, ge=0, allow_inf_nan=False)
    scale_down_minutes: float = Field(default=10.0, gt=0, allow_inf_nan=False)
    permit_timeout: float = Field(default=300.0, gt=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _one_source(self) -> "Scenario":
        if (self.nodes is None) == (self.trace is None):
            raise ValueError("give exactly one of nodes (a synthetic cluster) and trace")
        return self

    def build(self, seed: int) -> tuple[list, list, str]:
        """(nodes, jobs, a description) of this scenario for `seed`. Raises InputError for a bad trace."""
        if self.trace is not None:
            from ..cluster_models.alibaba import load_nodes, load_pods, resolve
            from .alibaba import trace_jobs, trace_nodes
            nodes = trace_nodes(load_nodes(resolve(self.trace_nodes, self.data_dir)))
            jobs = trace_jobs(load_pods(resolve(self.trace, self.data_dir)), self.day, self.hours, self.clones)
            return nodes, jobs, f"{Path(self.trace).name} from day {self.day:g}" + (
                f" x{self.clones}" if self.clones > 1 else "")
        from ..cluster_models.generate import generate_nodes
        from .workload import generate_jobs
        nodes = generate_nodes(self.nodes, seed=seed, node_type="gpu-8x")
        return nodes, generate_jobs(8 * self.nodes, self.hours, seed=seed, load=self.load), f"load {self.load:g}"


class SweepConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenarios: list[Scenario] = Field(min_length=1)
    policies: list[str] = Field(default_factory=lambda: list(POLICIES), min_length=1)
    seeds: list[Annotated[int, Field(ge=0, strict=True)]] = Field(default_factory=lambda: [0], min_length=1)

    @field_validator("policies")
    @classmethod
    def _known(cls, policies: list[str]) -> list[str]:
        for p in policies:
            policy_named(p)
        return policies

    @field_validator("scenarios", "policies", "seeds")
    @classmethod
    def _once_each(cls, values: list) -> list:
        # a run named twice is a row twice (or two scenarios' rows under one name): a slip, not a wish
        names = [v.name if isinstance(v, Scenario) else v for v in values]
        twice = next((v for i, v in enumerate(names) if v in names[:i]), None)
        if twice is not None:
            raise ValueError(f"{twice} given twice")
        return values

    def runs(self) -> list[dict]:
        """Every (scenario, policy, seed) as the plain dict simulate_one takes, in table order."""
        return [{"scenario": s.model_dump(), "policy": p, "seed": seed}
                for s in self.scenarios for p in self.policies for seed in self.seeds]


def load_sweep(path: Path) -> SweepConfig:
    """The sweep config at `path`; a bad one is an InputError naming the file and the field."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    # The manifests' reader: a key written twice is an error, a syntax error one line naming the line.
    docs = yaml_documents(text, str(path))
    if len(docs) > 1:
        raise InputError(f"{path}: expected a single document in the stream")
    doc = docs[0] if docs else None
    try:
        return SweepConfig.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise InputError(f"{path}: {where}: {err['msg']}" if where else f"{path}: {err['msg']}") from None


def simulate_one(run: dict) -> SimResult:
    """One simulation from its plain description: {"scenario", "policy", "seed"}, or {"resume": a checkpoint
    file}; with "checkpoint": {"path", "every_s"} its state is saved to that file every `every_s` simulated
    seconds (simulate/checkpoint.py)."""
    from . import checkpoint
    if "resume" in run:
        sim = checkpoint.load(run["resume"])
    else:
        sim = _simulation(run)
    saving = run.get("checkpoint")
    if saving is None:
        return sim.run()
    return sim.run(saving["every_s"], lambda s: checkpoint.save(s, saving["path"]))


def checkpoint_name(run: dict) -> str:
    """The file a run's checkpoints go to, in a checkpoint directory: scenario, policy and seed name it."""
    return f"{run['scenario']['name']}-{run['policy']}-seed{run['seed']}.json.gz"


def _simulation(run: dict):
    from .autoscaler import Autoscaler
    from .engine import Simulation
    scenario, seed = Scenario.model_validate(run["scenario"]), run["seed"]
    nodes, jobs, _ = scenario.build(seed)
    scaler = None
    if scenario.autoscale_nodes:
        template = max(nodes, key=lambda n: int(n.status.allocatable.get("nvidia.com/gpu", "0")))
        scaler = Autoscaler(template, scenario.autoscale_nodes, scenario.provision_minutes * 60,
                            scenario.scale_down_minutes * 60)
    return Simulation(nodes, jobs, policy_named(run["policy"]), hours=scenario.hours, seed=seed,
                      node_failures_per_day=scenario.node_failures_per_day, repair_s=scenario.repair_hours * 3600,
                      autoscaler=scaler, permit_timeout_s=scenario.permit_timeout)


def run_one(run: dict) -> dict:
    """One simulation's table row (timings included), led by its scenario's name."""
    return {"scenario": run["scenario"]["name"], **simulate_one(run).row()}


def run_many(runs: list[dict], fn=run_one, workers: int = 1, ray_address: str | None = None,
             on_done=None) -> list:
    """fn over every run, results in order: one after another (workers 1), on a process pool, or on Ray
    (`ray_address`: "local" starts one here, else the address of a running cluster)."""
    if ray_address is not None:
        return _on_ray(runs, fn, ray_address, on_done)
    if workers <= 1:
        out = []
        for run in runs:
            out.append(fn(run))
            if on_done:
                on_done()
        return out
    # spawn, not fork: a forked child of a process whose threads hold locks (JAX's, a BLAS pool) may deadlock
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(fn, run) for run in runs]
        out = []
        for f in futures:
            out.append(f.result())
            if on_done:
                on_done()
        return out


# Ray's own settings (RayConfig, read from RAY_<name> environment variables) bounding how long ray.init tries a
# cluster address: by default it makes NUM_REDIS_GET_RETRIES (20) attempts of about 40 s each (the GCS channel, its
# pubsub, then 30 s for the cluster id), so an address nothing listens at hangs ray.init some 13 minutes. One attempt
# with a 10 s cluster-id wait fails within about 20 s. A value the user set in the environment wins.
_RAY_CONNECT_LIMITS = {
    "RAY_gcs_server_port_wait_time_s": "1",    # attempts at the GCS (read by ray._private.node at each ray.init)
    "RAY_py_gcs_connect_timeout_s": "10",      # each attempt's wait for the cluster id (read when ray is imported)
}


def _on_ray(runs: list[dict], fn, address: str, on_done) -> list:
    if address != "local":
        # Before the import: the C++ settings are read once, when ray is first imported. Not for "local", whose GCS
        # server, started here, would inherit them.
        for name, value in _RAY_CONNECT_LIMITS.items():
            os.environ.setdefault(name, value)
    try:
        import ray
    except ImportError:
        raise InputError("--ray: needs Ray: pip install 'phalanx[dist]'") from None
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=None if address == "local" else address, include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        except (OSError, ValueError, RuntimeError) as exc:     # ConnectionError, "ray://" without ray[client], ...
            problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise InputError(f"--ray: cannot connect to a Ray cluster at {address}: {problem}") from None
    try:
        remote = ray.remote(fn)
        refs = [remote.remote(run) for run in runs]
        out = []
        for ref in refs:
            out.append(ray.get(ref))
            if on_done:
                on_done()
        return out
    finally:
        if started:
            ray.shutdown()
