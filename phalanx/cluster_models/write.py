"""Write objects back as Kubernetes manifests (multi-document YAML), quantities as Kubernetes strings."""
from __future__ import annotations

from pathlib import Path

import yaml

try:  # libyaml's emitter is ~10x faster when present
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper


def _quantities(resources: dict) -> dict:
    """Resource lists hold int64 (cpu in millicores); manifests want quantity strings."""
    return {name: (f"{value}m" if name == "cpu" else str(value)) for name, value in resources.items()}


def _fix_requirements(container_like: dict) -> None:
    res = container_like.get("resources")
    if res:
        for part in ("requests", "limits"):
            if part in res:
                res[part] = _quantities(res[part])


def manifest(obj) -> dict:
    doc = obj.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude_none=True)
    doc = {"apiVersion": "v1" if obj.kind in ("Node", "Pod") else "scheduling.k8s.io/v1", "kind": obj.kind, **doc}
    status = doc.get("status") or {}
    for part in ("allocatable", "capacity"):
        if part in status:
            status[part] = _quantities(status[part])
    spec = doc.get("spec") or {}
    if "overhead" in spec:
        spec["overhead"] = _quantities(spec["overhead"])
    _fix_requirements(spec)
    for key in ("containers", "initContainers"):
        for c in spec.get(key, []):
            _fix_requirements(c)
    return doc


def write_manifests(path: Path, objects) -> None:
    with open(path, "w") as f:
        yaml.dump_all((manifest(o) for o in objects), f, Dumper=_Dumper, sort_keys=False)
