"""Dynamic Resource Allocation objects (resource.k8s.io/v1, Kubernetes v1.36) and the device table.

Shapes read (k8s.io/api/resource/v1/types.go; only what changes a scheduling decision):

    DeviceClass.spec.selectors[].cel.expression
    ResourceSlice.spec
      driver                 DNS subdomain
      pool                   {name, generation, resourceSliceCount}
      nodeName               the node the devices are local to (nodeSelector / allNodes /
                             perDeviceNodeSelection are not modelled: rejected)
      devices[]              {name, attributes: {<name>: {string | int | bool | version}}}; an unqualified
                             attribute name belongs to the driver's domain (<driver>/<name>)
    ResourceClaim.spec.devices.requests[]
      name                   DNS label, unique in the claim
      exactly                {deviceClassName, allocationMode ExactCount (default) | All, count (default 1),
                              selectors[].cel.expression}
                             (firstAvailable, i.e. prioritized lists, and devices.constraints are rejected)
    ResourceClaim.status.allocation.devices.results[]   {request, driver, pool, device}: an existing allocation
    ResourceClaimTemplate.spec.spec                      a ResourceClaim spec

CEL: phalanx evaluates a subset of the selector language, enough for DeviceClass-style model selection:

    device.driver == "<driver>"
    device.attributes["<domain>"].<name> == <literal>        literal: "string", integer, true, false

joined by `&&`. Anything else is an InputError naming the object and the field. A device without the attribute
does not match (upstream: a CEL runtime error, which fails the pod's scheduling attempt).

`DeviceTable` holds every device of every node-local ResourceSlice as structure-of-arrays rows; the scheduler's
claim state (phalanx.sched.claims) marks rows allocated. It is separate from `gpus.GpuTable`, which tracks
fractional (milli-GPU) sharing of one model attribute for the trace replay; DRA devices are allocated whole and
matched on any attribute.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from .errors import InputError
from .objects import K8sModel, ObjectMeta
from .tensors import Vocab

__all__ = [
    "RESOURCE_V1", "CelCondition", "DeviceClass", "DeviceTable", "ResourceClaim", "ResourceClaimSpec",
    "ResourceClaimTemplate", "ResourceSlice", "parse_cel",
]

RESOURCE_V1 = "resource.k8s.io/v1"
DRIVER = "driver"            # the pseudo attribute column 0 of DeviceTable.values: the device's driver
_CEL_HELP = ('phalanx reads device.driver == "..." and device.attributes["<domain>"].<name> == "..." '
             'joined by &&')

# -- the CEL subset ------------------------------------------------------------------------------------
_STRING = r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\''
_LITERAL = rf'(?P<lit>{_STRING}|-?\d+|true|false)'
_DRIVER_COND = re.compile(rf'^\s*device\.driver\s*==\s*{_LITERAL}\s*$')
_ATTR_COND = re.compile(rf'^\s*device\.attributes\[\s*(?P<dom>{_STRING})\s*\]\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)'
                        rf'\s*==\s*{_LITERAL}\s*$')


@dataclass(frozen=True)
class CelCondition:
    """`attribute == value`; attribute "driver" is the device's driver, else a qualified "<domain>/<name>"."""
    attribute: str
    value: tuple            # (type, value): ("string", "A100"), ("int", 80), ("bool", True)


def _literal(text: str) -> tuple:
    if text[0] in "\"'":
        return ("string", bytes(text[1:-1], "utf-8").decode("unicode_escape"))
    if text in ("true", "false"):
        return ("bool", text == "true")
    return ("int", int(text))


def _split_and(expression: str) -> list[str]:
    """Split on && outside string literals."""
    parts, start, i, quote = [], 0, 0, None
    while i < len(expression):
        c = expression[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif expression.startswith("&&", i):
            parts.append(expression[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(expression[start:])
    return parts


@lru_cache(maxsize=4096)
def parse_cel(expression: str) -> tuple[CelCondition, ...]:
    """The conditions of a selector expression in phalanx's CEL subset; ValueError for anything else."""
    out = []
    for part in _split_and(expression):
        text = part.strip()
        while text.startswith("(") and text.endswith(")"):
            text = text[1:-1].strip()
        m = _DRIVER_COND.match(text)
        if m and m.group("lit")[0] in "\"'":
            out.append(CelCondition(DRIVER, _literal(m.group("lit"))))
            continue
        m = _ATTR_COND.match(text)
        if m:
            domain = _literal(m.group("dom"))[1]
            out.append(CelCondition(f"{domain}/{m.group('name')}", _literal(m.group("lit"))))
            continue
        raise ValueError(f'unsupported expression "{expression}" ({_CEL_HELP})')
    return tuple(out)


# -- models ----------------------------------------------------------------------------------------------
class CELDeviceSelector(K8sModel):
    expression: str = Field(min_length=1)

    @field_validator("expression")
    @classmethod
    def _subset(cls, expression: str) -> str:
        parse_cel(expression)
        return expression


class DeviceSelector(K8sModel):
    cel: CELDeviceSelector


def _conditions(selectors: list[DeviceSelector]) -> tuple[CelCondition, ...]:
    return tuple(c for s in selectors for c in parse_cel(s.cel.expression))


class DeviceClassSpec(K8sModel):
    selectors: list[DeviceSelector] = Field(default_factory=list)


class DeviceClass(K8sModel):
    kind: str = "DeviceClass"
    metadata: ObjectMeta
    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)

    @property
    def conditions(self) -> tuple[CelCondition, ...]:
        return _conditions(self.spec.selectors)


class ExactDeviceRequest(K8sModel):
    device_class_name: str = Field(min_length=1)
    allocation_mode: Literal["ExactCount", "All"] = "ExactCount"
    count: int | None = Field(default=None, ge=1)
    selectors: list[DeviceSelector] = Field(default_factory=list)

    def count_needed(self) -> int:
        """Devices an ExactCount request needs (count defaults to 1); 0 for All."""
        return 0 if self.allocation_mode == "All" else (1 if self.count is None else self.count)

    @property
    def conditions(self) -> tuple[CelCondition, ...]:
        return _conditions(self.selectors)


class DeviceRequest(K8sModel):
    name: str = Field(min_length=1)
    exactly: ExactDeviceRequest | None = None
    first_available: list[Any] | None = None


class DeviceClaim(K8sModel):
    requests: list[DeviceRequest] = Field(default_factory=list)
    constraints: list[Any] = Field(default_factory=list)


class ResourceClaimSpec(K8sModel):
    devices: DeviceClaim = Field(default_factory=DeviceClaim)

    def check(self, path: str) -> None:
        """What phalanx cannot allocate, as "field.path: problem" (raised from the object's own validator so
        the path is complete)."""
        devices = self.devices
        if devices.constraints:
            raise ValueError(f"{path}devices.constraints: matchAttribute/distinctAttribute constraints are not "
                             f"modelled")
        seen = set()
        for i, r in enumerate(devices.requests):
            where = f"{path}devices.requests[{i}]"
            if r.name in seen:
                raise ValueError(f'{where}.name: duplicate name "{r.name}"')
            seen.add(r.name)
            if r.first_available:
                raise ValueError(f"{where}.firstAvailable: prioritized lists are not modelled (phalanx reads "
                                 f"exactly)")
            if r.exactly is None:
                raise ValueError(f"{where}.exactly: field required")
            if r.exactly.allocation_mode == "All" and r.exactly.count is not None:
                raise ValueError(f"{where}.exactly.count: must not be set when allocationMode is All")


class DeviceRequestAllocationResult(K8sModel):
    request: str = ""
    driver: str = Field(min_length=1)
    pool: str = Field(min_length=1)
    device: str = Field(min_length=1)


class DeviceAllocationResult(K8sModel):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=list)


class AllocationResult(K8sModel):
    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)


class ResourceClaimStatus(K8sModel):
    allocation: AllocationResult | None = None


def _default_namespace(meta: ObjectMeta) -> None:
    if not meta.namespace:
        meta.namespace = "default"


class ResourceClaim(K8sModel):
    kind: str = "ResourceClaim"
    metadata: ObjectMeta
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = Field(default_factory=ResourceClaimStatus)

    @model_validator(mode="after")
    def _object_rules(self) -> ResourceClaim:
        _default_namespace(self.metadata)
        self.spec.check("spec.")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


class ResourceClaimTemplateSpec(K8sModel):
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(K8sModel):
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta
    spec: ResourceClaimTemplateSpec

    @model_validator(mode="after")
    def _object_rules(self) -> ResourceClaimTemplate:
        _default_namespace(self.metadata)
        self.spec.spec.check("spec.spec.")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


class DeviceAttribute(K8sModel):
    int_: int | None = Field(default=None, alias="int")
    bool_: bool | None = Field(default=None, alias="bool")
    string: str | None = None
    version: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> DeviceAttribute:
        set_ = [v for v in (self.int_, self.bool_, self.string, self.version) if v is not None]
        if len(set_) != 1:
            raise ValueError("exactly one of int, bool, string, version is required")
        return self

    @property
    def typed(self) -> tuple:
        if self.int_ is not None:
            return ("int", self.int_)
        if self.bool_ is not None:
            return ("bool", self.bool_)
        if self.string is not None:
            return ("string", self.string)
        return ("version", self.version)


class Device(K8sModel):
    name: str = Field(min_length=1)
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)


class ResourcePool(K8sModel):
    name: str = Field(min_length=1)
    generation: int = 0
    resource_slice_count: int = 1


class ResourceSliceSpec(K8sModel):
    driver: str = Field(min_length=1)
    pool: ResourcePool
    node_name: str | None = None
    node_selector: Any = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = Field(default_factory=list)


class ResourceSlice(K8sModel):
    kind: str = "ResourceSlice"
    metadata: ObjectMeta
    spec: ResourceSliceSpec

    @model_validator(mode="after")
    def _node_local(self) -> ResourceSlice:
        spec = self.spec
        if spec.node_selector is not None or spec.all_nodes or spec.per_device_node_selection:
            raise ValueError("spec.nodeName: phalanx models node-local devices only (nodeSelector, allNodes and "
                             "perDeviceNodeSelection are not modelled)")
        if not spec.node_name:
            raise ValueError("spec.nodeName: field required (phalanx models node-local devices only)")
        return self


# -- the device table --------------------------------------------------------------------------------------
@dataclass
class DeviceTable:
    """Every device of the node-local ResourceSlices, one row each, in input order (slices, then devices)."""

    node: np.ndarray           # (D,) int64 node id the device is local to; -1 while that node is not in the cluster
    values: np.ndarray         # (D, A) int64 value id per attribute column (column 0: the driver), -1 absent
    allocated: np.ndarray      # (D,) bool  allocated to a claim (committed, waiting or tentatively placed)
    slots: np.ndarray          # (N, S) int64 device ids of each node in device order, -1 padding (S >= 1)
    node_names: tuple          # (D,) the node each device's slice names
    keys: tuple                # (D,) (driver, pool, device name)
    attributes: Vocab = field(default_factory=Vocab)              # attribute name -> column
    vocabs: list[Vocab] = field(default_factory=list)            # per column: typed value -> id
    index: dict = field(default_factory=dict)                    # (driver, pool, device) -> row

    @property
    def size(self) -> int:
        return int(self.node.shape[0])

    @classmethod
    def build(cls, slices: list[ResourceSlice], node_index: dict[str, int]) -> DeviceTable:
        attributes, vocabs = Vocab([DRIVER]), [Vocab()]
        rows: list[dict[int, int]] = []
        names, keys, index = [], [], {}
        for rs in slices:
            spec = rs.spec
            for j, dev in enumerate(spec.devices):
                key = (spec.driver, spec.pool.name, dev.name)
                if key in index:
                    raise InputError(f"ResourceSlice {rs.metadata.name}: spec.devices[{j}].name: duplicate device "
                                     f"{dev.name!r} in pool {spec.pool.name!r} of driver {spec.driver!r}")
                index[key] = len(keys)
                row = {0: vocabs[0].add(("string", spec.driver))}
                for name, attr in dev.attributes.items():
                    qualified = name if "/" in name else f"{spec.driver}/{name}"
                    col = attributes.add(qualified)
                    if col == len(vocabs):
                        vocabs.append(Vocab())
                    row[col] = vocabs[col].add(attr.typed)
                rows.append(row)
                names.append(spec.node_name)
                keys.append(key)
        values = np.full((len(rows), len(attributes)), -1, np.int64)
        for d, row in enumerate(rows):
            for col, vid in row.items():
                values[d, col] = vid
        table = cls(node=np.full(len(rows), -1, np.int64), values=values, allocated=np.zeros(len(rows), bool),
                    slots=np.full((len(node_index), 1), -1, np.int64), node_names=tuple(names), keys=tuple(keys),
                    attributes=attributes, vocabs=vocabs, index=index)
        table.relink(node_index)
        return table

    def relink(self, node_index: dict[str, int]) -> None:
        """Node ids after nodes were added or removed (devices are identified by node name)."""
        self.node = np.array([node_index.get(n, -1) for n in self.node_names], np.int64).reshape(self.size)
        n = len(node_index)
        per_node = np.bincount(self.node[self.node >= 0], minlength=n) if n else np.zeros(0, np.int64)
        s = max(1, int(per_node.max()) if n else 1)
        slots = np.full((n, s), -1, np.int64)
        fill = np.zeros(n, np.int64)
        for d, node in enumerate(self.node.tolist()):
            if node >= 0:
                slots[node, fill[node]] = d
                fill[node] += 1
        self.slots = slots

    def condition_arrays(self, conditions: tuple[CelCondition, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(C,) int64 columns and (C,) int64 value ids of the conditions; a value no device has gets id -2,
        an attribute no device has column 0 with id -2 (never equal to any row)."""
        cols, vals = [], []
        for c in conditions:
            col = self.attributes.get(c.attribute)
            vid = self.vocabs[col].get(c.value) if col >= 0 else -1
            cols.append(max(col, 0))
            vals.append(vid if vid >= 0 and col >= 0 else -2)
        return np.array(cols, np.int64).reshape(len(cols)), np.array(vals, np.int64).reshape(len(vals))
