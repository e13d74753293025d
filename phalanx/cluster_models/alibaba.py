"""The Alibaba GPU cluster trace (clusterdata cluster-trace-gpu-v2023, the "openb" lists of Weng et al., ATC'23).

Node list: sn,cpu_milli,memory_mib,gpu,model. Pod lists: name,cpu_milli,memory_mib,num_gpu,gpu_milli and optionally
gpu_spec (`|`-separated allowed models, may be empty),qos,pod_phase,creation_time,deletion_time,scheduled_time.
Every bad row is one InputError naming the file, the row (1-based line number) and the field.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .gpus import GpuTable, check_gpu_request

DATA_ENV = "PHALANX_DATA"
TRACE_DIR = "alibaba-gpu-v2023"
NODE_LIST = "openb_node_list_gpu_node.csv"
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
MIB = 1024 * 1024
INT64_MAX = (1 << 63) - 1


@dataclass
class TraceNodes:
    names: tuple            # (N,) node names (sn)
    cpu_milli: np.ndarray   # (N,) int64 allocatable cpu in millicores
    memory: np.ndarray      # (N,) int64 allocatable memory in bytes
    gpus: GpuTable          # one row per device

    @property
    def size(self) -> int:
        return len(self.names)


@dataclass
class TracePods:
    names: tuple            # (P,) pod names
    cpu_milli: np.ndarray   # (P,) int64 cpu request in millicores
    memory: np.ndarray      # (P,) int64 memory request in bytes
    num_gpu: np.ndarray     # (P,) int64 GPUs requested (0..8)
    gpu_milli: np.ndarray   # (P,) int64 milli-GPU per requested GPU (1000 = whole GPU)
    gpu_spec: tuple         # (P,) allowed models as the trace writes them ("" = any), empty entries dropped
    # When the file has the columns (the simulator replays them in time; the FGD replay does not read them):
    creation: np.ndarray | None = None    # (P,) int64 creation_time, seconds
    deletion: np.ndarray | None = None    # (P,) int64 deletion_time, seconds
    scheduled: np.ndarray | None = None   # (P,) int64 scheduled_time, seconds; -1 when empty (never scheduled)
    qos: tuple = ()                       # (P,) the qos column ("LS", "BE", ...), () without it

    @property
    def size(self) -> int:
        return len(self.names)


def default_data_dir() -> Path | None:
    """$PHALANX_DATA, else the shared trace directory found next to the repository (shared/data/alibaba-gpu-v2023)."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        for candidate in (parent / "shared" / "data" / TRACE_DIR, parent / "data" / TRACE_DIR):
            if candidate.is_dir():
                return candidate
    return None


def resolve(name: str | Path, data_dir: str | Path | None = None) -> Path:
    """A full path as given; a bare file name against `data_dir` (default: default_data_dir())."""
    path = Path(name)
    if path.exists() or path.parent != Path("."):
        return path
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    if base is None:
        return path
    return base / path


def _rows(path: Path, required: tuple[str, ...]):
    try:
        handle = open(path, newline="", encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    with handle:
        reader = csv.reader(handle)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise InputError(f"{path}: empty file (expected a header {','.join(required)})") from None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: line 1: not CSV: {exc}") from None
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(f"{path}: header: missing column {missing[0]!r} (have {','.join(header)})")
        col = {h: i for i, h in enumerate(header)}
        try:
            for row in reader:
                line = reader.line_num
                if not row or all(not c.strip() for c in row):
                    continue
                if len(row) < len(header):
                    raise InputError(f"{path}: line {line}: {len(row)} fields, the header has {len(header)}")
                yield line, {h: row[i].strip() for h, i in col.items()}
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: line {reader.line_num}: not CSV: {exc}") from None


def _int(path: Path, line: int, name: str, text: str, field: str, low: int = 0) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{path}: line {line} ({name}): {field}: not an integer: {text!r}") from None
    if value < low or value > INT64_MAX:
        raise InputError(f"{path}: line {line} ({name}): {field}: out of range: {value}")
    return value


def load_nodes(path: str | Path) -> TraceNodes:
    path = Path(path)
    names, cpu, mem, count, model = [], [], [], [], []
    seen = set()
    for line, r in _rows(path, NODE_COLUMNS):
        name = r["sn"]
        if not name:
            raise InputError(f"{path}: line {line}: sn: empty node name")
        if name in seen:
            raise InputError(f"{path}: line {line} ({name}): sn: duplicate node name")
        seen.add(name)
        names.append(name)
        cpu.append(_int(path, line, name, r["cpu_milli"], "cpu_milli"))
        mem.append(_memory_bytes(path, line, name, r["memory_mib"]))
        g = _int(path, line, name, r["gpu"], "gpu")
        m = r["model"] if r["model"].lower() != "nan" else ""
        if g > 0 and not m:
            raise InputError(f"{path}: line {line} ({name}): model: empty for a node with {g} GPUs")
        count.append(g)
        model.append(m)
    if not names:
        raise InputError(f"{path}: no nodes")
    return TraceNodes(names=tuple(names), cpu_milli=np.asarray(cpu, dtype=np.int64),
                      memory=np.asarray(mem, dtype=np.int64), gpus=GpuTable.uniform(count, model))


def _memory_bytes(path: Path, line: int, name: str, text: str) -> int:
    """The memory_mib column in bytes; one-line error when it does not fit int64."""
    mem_mib = _int(path, line, name, text, "memory_mib")
    if mem_mib > INT64_MAX // MIB:
        raise InputError(f"{path}: line {line} ({name}): memory_mib: out of range: {mem_mib}")
    return mem_mib * MIB


def load_pods(path: str | Path) -> TracePods:
    path = Path(path)
    names, cpu, mem, num, milli, spec = [], [], [], [], [], []
    times: dict[str, list[int]] = {"creation_time": [], "deletion_time": [], "scheduled_time": []}
    qos: list[str] = []
    timed = None
    for line, r in _rows(path, POD_COLUMNS):
        if timed is None:
            timed = all(c in r for c in times)
        if timed:
            for column, values in times.items():
                text = r[column]
                values.append(-1 if column == "scheduled_time" and text in ("", "nan")
                              else _int(path, line, r["name"], text, column))
        if "qos" in r:
            qos.append(r["qos"])
        name = r["name"]
        if not name:
            raise InputError(f"{path}: line {line}: name: empty pod name")
        names.append(name)
        cpu.append(_int(path, line, name, r["cpu_milli"], "cpu_milli"))
        mem.append(_memory_bytes(path, line, name, r["memory_mib"]))
        n = _int(path, line, name, r["num_gpu"], "num_gpu")
        m = _int(path, line, name, r["gpu_milli"], "gpu_milli")
        check_gpu_request(n, m, f"{path}: line {line} ({name})")
        num.append(n)
        milli.append(m)
        raw = r.get("gpu_spec", "")
        raw = "" if raw.lower() == "nan" else raw
        spec.append("|".join(x for x in raw.split("|") if x) if n > 0 else "")
    if not names:
        raise InputError(f"{path}: no pods")
    creation, deletion, scheduled = (np.asarray(v, np.int64) if timed else None for v in times.values())
    return TracePods(names=tuple(names), cpu_milli=np.asarray(cpu, dtype=np.int64),
                     memory=np.asarray(mem, dtype=np.int64), num_gpu=np.asarray(num, dtype=np.int64),
                     gpu_milli=np.asarray(milli, dtype=np.int64), gpu_spec=tuple(spec), creation=creation,
                     deletion=deletion, scheduled=scheduled, qos=tuple(qos))
