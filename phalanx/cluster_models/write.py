"""Write objects back as Kubernetes manifests (multi-document YAML); quantities dump as Kubernetes strings."""
from __future__ import annotations

from pathlib import Path

import yaml

try:  # libyaml's emitter is much faster when present
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper


API_VERSIONS = {"Node": "v1", "Pod": "v1", "PriorityClass": "scheduling.k8s.io/v1",
                "Workload": "scheduling.k8s.io/v1alpha2", "PodGroup": "scheduling.k8s.io/v1alpha2"}


def manifest(obj) -> dict:
    doc = obj.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude_none=True)
    return {"apiVersion": API_VERSIONS[obj.kind], "kind": obj.kind, **doc}


def write_manifests(path: Path, objects) -> None:
    with open(path, "w") as f:
        yaml.dump_all((manifest(o) for o in objects), f, Dumper=_Dumper, sort_keys=False)
