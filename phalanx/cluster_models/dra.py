"""Dynamic Resource Allocation objects (resource.k8s.io/v1, Kubernetes v1.36) and the device table.

v1beta2 documents are read as v1 (the fields below are the same); v1beta1 ones are rewritten to v1 first
(`v1beta1_to_v1`: a request's deviceClassName, selectors, allocationMode and count move under `exactly`, a
device's `basic` fields onto the device), so errors name the v1 path.

Shapes read (k8s.io/api/resource/v1/types.go; only what changes a scheduling decision):

    DeviceClass.spec.selectors[].cel.expression
    ResourceSlice.spec       validated as v1.36's API server does (ValidateResourceSlice), first error in its order
      driver                 a DNS subdomain once lowercased, at most 63 bytes
      pool                   {name, generation, resourceSliceCount}
      nodeName               the node the devices are local to (nodeSelector / allNodes /
                             perDeviceNodeSelection, shared and consumed counters, consumable capacity are validated
                             and then rejected: not modelled)
      devices[]              {name, attributes: {<name>: {string | int | bool | version}}, capacity: {<name>: {value}},
                             taints}; an unqualified attribute name belongs to the driver's domain (<driver>/<name>)
    ResourceClaim.spec.devices.requests[]
      name                   DNS label, unique in the claim
      exactly                {deviceClassName, allocationMode ExactCount (default) | All, count (default 1),
                              selectors[].cel.expression, tolerations[]}
      firstAvailable         a prioritized list (DRAPrioritizedList): at most 8 subrequests, each {name (DNS label,
                             unique in the list), and exactly's fields}; exactly one of exactly / firstAvailable
    ResourceClaim.spec.devices.constraints[]
      matchAttribute         a fully qualified attribute name "<domain>/<name>": every device allocated for the
                             constraint's requests has the same value of it (distinctAttribute, part of
                             DRAConsumableCapacity, is rejected)
      requests               names of the claim's requests (or "<request>/<subrequest>") it applies to; empty: all
    ResourceClaim.status.allocation.devices.results[]   {request, driver, pool, device}: an existing allocation
    ResourceClaimTemplate.spec.spec                      a ResourceClaim spec
    DeviceClass.spec.config[], ResourceClaim.spec.devices.config[]   opaque driver configuration: validated, unused

Fields whose v1.36 gates are off (list-valued attributes, nodeAllocatableResourceMappings) are dropped as the API
server drops them; the loader names them in a warning (ResourceSlice.dropped).

CEL: device selectors are evaluated by a real CEL implementation, the `cel` module of the PyPI package
common-expression-language (Rust's cel interpreter behind PyO3: a compiled parser and evaluator, so a selector
costs microseconds per device; pure-Python cel-python takes about a hundred times longer). It is optional
(`pip install 'phalanx[dra]'`); reading a selector without it is an InputError saying so. Each selector is
compiled once and evaluated once per distinct device (driver, attributes, capacity), giving a (D,) mask the
vectorised filter reads. The environment is upstream's (k8s.io/dynamic-resource-allocation/cel):
`device.driver`, `device.attributes["<domain>"].<name>` (string, int, bool, or a version as its string) and
`device.capacity["<domain>"].<name>` (a quantity); with the Kubernetes library functions `quantity("40Gi")`,
`semver("1.2.3")`, and `a.compareTo(b)`, `a.isGreaterThan(b)`, `a.isLessThan(b)` on quantities and versions.
Quantities are exact integers of milli-units (so they also compare with `<`, `>`, which upstream's typed
quantities do not allow). A device without the attribute or capacity a selector reads is kept as that selector's
error on the device ("no such key: <name>"; a domain the device has nothing of reads as an empty map, as
upstream's): upstream's allocator fails the pod's scheduling attempt with it where its walk evaluates the selector
on that device (sched/claims.py decides where). Any other runtime error (a type error, division by zero, overflow, a
bad `quantity()` or `semver()` argument, ...) is an InputError naming the selector and the device, with upstream's
"CEL runtime error" wording, checked when the cluster is built. The library has no type checker (it
compiles to an untyped AST), so type errors upstream's API server rejects at create time surface here only when a
selector is evaluated on a device.

`DeviceTable` holds every device of every node-local ResourceSlice of its pool's newest generation (older slices
are out of date) as structure-of-arrays rows; the devices of an incomplete pool (fewer slices than
resourceSliceCount) are in no node's slots, as upstream allocates none of them; the scheduler's
claim state (phalanx.sched.claims) marks rows allocated. It is separate from `gpus.GpuTable`, which tracks
fractional (milli-GPU) sharing of one model attribute for the trace replay; DRA devices are allocated whole and
matched on any attribute.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from fractions import Fraction
from typing import Annotated, Any

import numpy as np
from pydantic import BeforeValidator, Field, StrictBool, field_validator, model_validator

from .errors import InputError, render_value
from .quantity import QuantityError, decode_quantity, milli_value, parse_quantity
from .jobs import PodTemplateMetadata, go_json, not_supported
from .objects import (Int64, K8sModel, NodeSelector, ObjectMeta, annotations_problem, check_subdomain_name,
                      dns_label_problem, dns_subdomain_problem, go_quote, is_extended_resource_name, label_key_problem,
                      label_value_problem, labels_problem, node_selector_problem)

__all__ = [
    "RESOURCE_V1", "RESOURCE_V1BETA1", "RESOURCE_V1BETA2", "CelMatches", "CelRuntimeError", "CelUnavailable",
    "CelUndeclared", "DeviceClass", "DeviceTable", "NodePool", "ResourceClaim", "ResourceClaimSpec",
    "ResourceClaimTemplate", "ResourceSlice", "Selection", "cel_matches", "cel_program", "v1beta1_to_v1",
]

RESOURCE_V1 = "resource.k8s.io/v1"


# -- CEL ------------------------------------------------------------------------------------------------
class CelUnavailable(ValueError):
    """The CEL implementation is not installed."""


class CelRuntimeError(ValueError):
    """A selector failed on one of the devices it was evaluated on (`index`: that device's row in the list
    cel_matches was given); `detail` is the library's error, one line."""

    def __init__(self, expression: str, index: int, detail: str):
        super().__init__(f'CEL expression "{expression}": CEL runtime error: {detail}')
        self.expression, self.index, self.detail = expression, index, detail


class CelUndeclared(CelRuntimeError):
    """The selector names a variable or function upstream's CEL environment does not declare (a compile error
    upstream; the library meets it when it evaluates that name)."""


_UNDEFINED = re.compile(r"^Undefined variable or function: '([^']+)'$")
# Functions and macros of upstream's device-selector environment (CEL's standard library and the Kubernetes
# libraries it adds): a call of one of these with the wrong arguments is not an undeclared reference.
_CEL_FUNCTIONS = frozenset("""
    all exists exists_one filter map has size matches startsWith endsWith contains int uint double string bytes bool
    duration timestamp type dyn getDate getDayOfMonth getDayOfWeek getDayOfYear getFullYear getHours
    getMilliseconds getMinutes getMonth getSeconds quantity isQuantity semver isSemver compareTo isGreaterThan
    isLessThan add sub asInteger asApproximateFloat isInteger sign major minor patch charAt indexOf lastIndexOf
    lowerAscii upperAscii replace split substring trim join format quote reverse find findAll isSorted sum min max
    url isURL getScheme getHost getHostname getPort getEscapedPath getQuery ip isIP cidr isCIDR
    containsIP containsCIDR prefixLength family isUnspecified isLoopback isLinkLocalMulticast isLinkLocalUnicast
    isGlobalUnicast masked
""".split())


def _not_function_failure(record: logging.LogRecord) -> bool:
    # The library logs "Python function 'quantity' failed: ..." (a WARNING on the "cel" logger, printed to stderr
    # when logging is not configured) before raising; cel_matches reports that failure itself.
    return not record.getMessage().startswith("Python function '")


def _cel():
    try:
        import cel
    except ImportError:
        raise CelUnavailable("device selectors need a CEL implementation: pip install 'phalanx[dra]' "
                             "(the common-expression-language package)") from None
    logger = logging.getLogger("cel")
    if _not_function_failure not in logger.filters:
        logger.addFilter(_not_function_failure)
    return cel


@lru_cache(maxsize=4096)
def cel_program(expression: str):
    """The compiled selector; ValueError (one line) when it does not parse."""
    cel = _cel()
    try:
        return cel.compile(expression)
    except ValueError as error:
        first = str(error).splitlines()[0] if str(error) else ""
        detail = first.split("ERROR: <input>:", 1)[-1]       # "1:17: Syntax error: mismatched input ..."
        raise ValueError(f'invalid CEL expression "{expression}": {detail}') from None


def _semver(text: str) -> tuple:
    core, _, pre = str(text).lstrip("v").partition("-")
    parts = core.split("+")[0].split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f'invalid semver "{text}"')
    # A pre-release sorts before its release (semver.org rule 11, for the plain dotted forms read here).
    return tuple(int(p) for p in parts) + ((0, pre) if pre else (1, ""))


def _compare(a, b) -> int:
    if isinstance(a, str) or isinstance(b, str):
        a, b = _semver(a), _semver(b)
    return (a > b) - (a < b)


def _quantity(text: str) -> int:
    return milli_value(parse_quantity(text))


# The Kubernetes CEL library functions device selectors use (quantity and semver values, their comparisons).
def _semver_value(text: str) -> str:
    _semver(text)                      # a bad version is a runtime error, as upstream's semver() raises
    return text


_FUNCTIONS = {
    "quantity": _quantity,
    "semver": _semver_value,
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
}


def _reporting(name: str, function, failures: list[str]):
    """`function` as CEL calls it, noting why it failed: the library's own text for it is a multi-sentence
    wrapper ("Function 'quantity' error: Python function call failed: QuantityError: ... Check function
    arguments and their types.")."""
    def call(*args):
        try:
            return function(*args)
        except Exception as error:
            failures.append(f"{name}(): {error}")
            raise
    return call


def _runtime_detail(error: BaseException) -> str:
    """The library's error as one short line: its first line and first sentence (the rest is advice on CEL
    typing), without the redundant " in CEL expression" and the closing period."""
    text = (str(error).splitlines() or [""])[0]
    text = text.split(". ", 1)[0].removesuffix(" in CEL expression").rstrip(".")
    return text or type(error).__name__


@dataclass(frozen=True)
class CelMatches:
    """A selector evaluated on a list of devices: which match, and on which the evaluation meets a missing key.

    Upstream's allocator evaluates a selector only on the devices its walk reaches; where that evaluation fails
    ("no such key: x", a device lacking the attribute or capacity read) Allocate returns an error and the pod's
    scheduling attempt fails with it. So a missing key is kept per device instead of folded into no match."""
    matched: np.ndarray          # (n,) bool
    missing: dict[int, str]      # device index -> the evaluation's error, "no such key: <name>"


class _NoSuchKey(Exception):
    """The evaluation read a key its map lacks."""


def _execute(cel, program, device: dict, functions: dict):
    """The selector on one device, with upstream's activation: device.attributes["<domain>"] and
    device.capacity["<domain>"] are an empty map for a domain the device has nothing of (cel.DeviceMatches builds
    them as maps with that default), so the key that is missing is the name read from them. The library has no map
    defaults: a domain it misses is added, empty, to both maps and the evaluation is run again; a key already added
    that is missing again is a name. _NoSuchKey(<key>) for a missing key."""
    added: set = set()
    while True:
        try:
            return program.execute(cel.Context(variables={"device": device}, functions=functions))
        except KeyError as error:
            key = error.args[0] if error.args else ""
            lacking = [m for m in ("attributes", "capacity") if key not in device[m]]
            if key in added or not lacking:
                raise _NoSuchKey(key) from None
            added.add(key)
            device = {**device, **{m: {**device[m], key: {}} for m in lacking}}


def cel_matches(expression: str, devices: list[dict]) -> CelMatches:
    """The selector on each device activation ({"driver", "attributes", "capacity"}). A missing map key is kept as
    that device's error (CelMatches.missing, upstream's wording "no such key: <name>"); any other runtime error
    (whatever the library raises) is a CelRuntimeError naming the device's index; a result that is not a bool, a
    ValueError."""
    cel = _cel()
    program = cel_program(expression)
    failures: list[str] = []
    functions = {name: _reporting(name, function, failures) for name, function in _FUNCTIONS.items()}
    out = np.zeros(len(devices), bool)
    missing: dict[int, str] = {}
    for i, device in enumerate(devices):
        failures.clear()
        try:
            result = _execute(cel, program, device, functions)
        except _NoSuchKey as error:
            missing[i] = f"no such key: {error.args[0]}"
            continue
        except BaseException as error:
            # Every evaluation error (RuntimeError, TypeError, ValueError, ZeroDivisionError, OverflowError,
            # IndexError, ...) and a Rust panic (pyo3's PanicException derives from BaseException); not
            # KeyboardInterrupt / SystemExit.
            if not isinstance(error, Exception) and type(error).__name__ != "PanicException":
                raise
            detail = failures[-1] if failures and isinstance(error, RuntimeError) else _runtime_detail(error)
            undeclared = _UNDEFINED.match(detail)
            if undeclared and undeclared.group(1) not in _CEL_FUNCTIONS:
                # A name that is neither `device` nor a function of upstream's environment: its compiler refuses
                # the expression ("undeclared reference to 'x' (in container '')"), the library finds it here.
                raise CelUndeclared(expression, i, f"undeclared reference to '{undeclared.group(1)}' "
                                                   f"(in container '')") from None
            raise CelRuntimeError(expression, i, detail) from None
        if not isinstance(result, bool):
            raise ValueError(f'CEL expression "{expression}": must evaluate to a bool (got {result!r})')
        out[i] = result
    return CelMatches(out, missing)


# -- models ----------------------------------------------------------------------------------------------
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024       # resource.CELSelectorExpressionMaxLength


class CELDeviceSelector(K8sModel):
    expression: str = Field(min_length=1)

    @field_validator("expression")
    @classmethod
    def _compiles(cls, expression: str) -> str:
        if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:      # checked before it is compiled, as upstream
            raise ValueError(f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes")
        cel_program(expression)
        return expression


class DeviceSelector(K8sModel):
    cel: CELDeviceSelector | None = Field(default=None, validate_default=True)

    @field_validator("cel")
    @classmethod
    def _required(cls, cel: CELDeviceSelector | None) -> CELDeviceSelector:
        # validateSelector: a selector without `cel` is "Required value" at the field.
        if cel is None:
            raise ValueError("Required value")
        return cel


DEVICE_SELECTORS_MAX_SIZE = 32        # resource.DeviceSelectorsMaxSize


def _at_most_32_selectors(raw: Any) -> Any:
    """validateSelectorSlice: the count is checked before any selector is compiled."""
    if isinstance(raw, list):
        _check_at_most(raw, DEVICE_SELECTORS_MAX_SIZE, "")
    return raw


Selectors = Annotated[list[DeviceSelector], BeforeValidator(_at_most_32_selectors)]


def expressions(selectors: list[DeviceSelector]) -> tuple[str, ...]:
    return tuple(s.cel.expression for s in selectors)


OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024      # resource.OpaqueParametersMaxLength (bytes of the JSON)
DEVICE_CONFIG_MAX_SIZE = 32                   # resource.DeviceConfigMaxSize


class OpaqueDeviceConfiguration(K8sModel):
    """Driver configuration: the API server checks its shape (_check_configuration); phalanx allocates without it
    (it is for the driver on the node)."""
    driver: str = ""
    parameters: Any = None             # any JSON (runtime.RawExtension); absent and null alike are "Required value"


class DeviceClassConfiguration(K8sModel):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaimConfiguration(DeviceClassConfiguration):
    requests: list[str] = Field(default_factory=list)      # the requests it applies to (empty: all)


def _check_configuration(config: DeviceClassConfiguration, where: str) -> None:
    """validateDeviceConfiguration: `opaque` required; its driver a driver name, its parameters a JSON object of at
    most 10 KiB (validateRawExtension; the length of the JSON kubectl sends: compact, keys sorted)."""
    opaque = config.opaque
    if opaque is None:
        raise ValueError(f"{where}.opaque: Required value")
    _check_driver_name(opaque.driver, f"{where}.opaque.driver")
    at = f"{where}.opaque.parameters"
    if opaque.parameters is None:
        raise ValueError(f"{at}: Required value")
    if _byte_length(go_json(opaque.parameters, sort_keys=True)) > OPAQUE_PARAMETERS_MAX_LENGTH:
        raise ValueError(f"{at}: Too long: may not be more than {OPAQUE_PARAMETERS_MAX_LENGTH} bytes")
    if not isinstance(opaque.parameters, dict):
        raise ValueError(f'{at}: Invalid value: "<value omitted>": must be a valid JSON object')


def _check_configurations(configs: list, path: str, names: frozenset[str] | None = None) -> None:
    """validateSlice of configurations: the count first (it short-circuits), then each one: a claim's (`names`: its
    request names) the requests it names (validateDeviceClaimConfiguration), then its opaque configuration."""
    _check_at_most(configs, DEVICE_CONFIG_MAX_SIZE, path)
    for i, config in enumerate(configs):
        if names is not None:
            _check_request_refs(config.requests, f"{path}[{i}].requests", names)
        _check_configuration(config, f"{path}[{i}]")


class DeviceClassSpec(K8sModel):
    selectors: Selectors = Field(default_factory=list)
    config: list[DeviceClassConfiguration] = Field(default_factory=list)
    # DRAExtendedResource (beta, on in v1.36): pods asking for this extended resource may get it from DRA devices of
    # this class on nodes that do not advertise it (sched/claims.py).
    extended_resource_name: str | None = None


class DeviceClass(K8sModel):
    kind: str = "DeviceClass"
    metadata: ObjectMeta
    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)

    @model_validator(mode="after")
    def _object_rules(self) -> DeviceClass:
        """ValidateDeviceClass after the selectors (checked as they are read): the configurations, then the extended
        resource name (v1helper.IsExtendedResourceName)."""
        check_subdomain_name(self.metadata)
        spec = self.spec
        _check_configurations(spec.config, "spec.config")
        name = spec.extended_resource_name
        if name is not None and not is_extended_resource_name(name):
            raise ValueError(f'spec.extendedResourceName: Invalid value: "{name}": must be a valid extended resource '
                             f'name')
        return self

    @property
    def expressions(self) -> tuple[str, ...]:
        return expressions(self.spec.selectors)


class DeviceToleration(K8sModel):
    """A device request's toleration of device taints (resource.k8s.io/v1 DeviceToleration; its rules are
    validateDeviceToleration's, _check_toleration)."""
    key: str = ""
    operator: str = "Equal"          # +default="Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: Int64 | None = None

    @field_validator("operator", mode="before")
    @classmethod
    def _empty_operator_is_equal(cls, raw: Any) -> Any:
        return "Equal" if raw == "" else raw


class DeviceSelection(K8sModel):
    """What an `exactly` request and a `firstAvailable` subrequest share: the devices asked for (v1's
    ExactDeviceRequest and DeviceSubRequest fields, validated alike)."""
    device_class_name: str = ""                     # required: "" or absent refused (_absent_class_name)
    allocation_mode: str = "ExactCount"             # "" is defaulted to ExactCount; others refused in check()
    count: Int64 | None = None                      # 0 or absent: 1 for ExactCount (defaulting); checked in check()
    selectors: Selectors = Field(default_factory=list)
    tolerations: list[DeviceToleration] = Field(default_factory=list)     # of the devices' taints
    capacity: Any = None                            # consumable capacity: refused once the claim is valid

    @model_validator(mode="before")
    @classmethod
    def _absent_class_name(cls, raw: Any) -> Any:
        # An absent deviceClassName decodes to "", which validation refuses first (Required value, at its path).
        if isinstance(raw, dict) and "deviceClassName" not in raw and "device_class_name" not in raw:
            return {**raw, "deviceClassName": ""}
        return raw

    @field_validator("device_class_name")
    @classmethod
    def _class_name(cls, name: str) -> str:
        # validateDeviceClass: corevalidation.ValidateClassName, a DNS subdomain.
        if not name:
            raise ValueError("Required value")
        problem = dns_subdomain_problem(name)
        if problem is not None:
            raise ValueError(problem)
        return name

    def count_needed(self) -> int:
        """Devices an ExactCount request needs (count defaults to 1); 0 for All."""
        return 0 if self.allocation_mode == "All" else (self.count or 1)

    @property
    def expressions(self) -> tuple[str, ...]:
        return expressions(self.selectors)

    def check(self, where: str) -> None:
        """The API server's rules for these fields that pydantic does not check, and what phalanx refuses;
        `where` is the request's (or subrequest's) path."""
        # validateDeviceAllocationMode, on the defaulted values (SetDefaults_ExactDeviceRequest: "" is ExactCount,
        # whose count 0 is 1)
        count = self.count or 0
        if self.allocation_mode == "All":
            if count:
                raise ValueError(f"{where}.count: Invalid value: {count}: must not be specified when allocationMode "
                                 f"is 'All'")
        elif self.allocation_mode in ("ExactCount", ""):
            if count < 0:
                raise ValueError(f"{where}.count: Invalid value: {count}: must be greater than zero")
        else:
            raise ValueError(not_supported(f"{where}.allocationMode", self.allocation_mode, ("All", "ExactCount")))
        # Each toleration as validateDeviceToleration; their number is not checked (the hand-written validation has
        # no limit and the type's maxItems is not a v1.36 tag).
        for k, toleration in enumerate(self.tolerations):
            _check_toleration(toleration, f"{where}.tolerations[{k}]")


class ExactDeviceRequest(DeviceSelection):
    admin_access: StrictBool | None = None          # read to be refused (not modelled)


class DeviceSubRequest(DeviceSelection):
    """One alternative of a prioritized list (DRAPrioritizedList, beta and on in v1.36)."""
    name: str = Field(min_length=1)


FIRST_AVAILABLE_MAX_SIZE = 8          # resource.FirstAvailableDeviceRequestMaxSize


@dataclass(frozen=True)
class RequestChoice:
    """One way the allocator may satisfy a claim request: its `exactly`, or one subrequest of its `firstAvailable`
    (tried in list order)."""
    result: str                # the request name its allocation results give: "<request>" or "<request>/<subrequest>"
    name: str                  # its own name, as the allocator's errors name it (the subrequest's alone)
    spec: DeviceSelection


class DeviceRequest(K8sModel):
    name: str = Field(min_length=1)
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] | None = None

    def choices(self) -> tuple[RequestChoice, ...]:
        """The ways to satisfy it, in the allocator's order."""
        if self.first_available:
            return tuple(RequestChoice(f"{self.name}/{sub.name}", sub.name, sub) for sub in self.first_available)
        return (RequestChoice(self.name, self.name, self.exactly),)


DEVICE_CONSTRAINTS_MAX_SIZE = 32      # resource.DeviceConstraintsMaxSize
DEVICE_REQUESTS_MAX_SIZE = 32         # resource.DeviceRequestsMaxSize: names one constraint may list
DEVICE_MAX_ID_LENGTH = 32             # resource.DeviceMaxIDLength: an attribute name's part after the domain
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REQUEST_REF = ("must be the name of a request in the claim or the name of a request and a subrequest separated by "
                "'/'")


class DeviceConstraint(K8sModel):
    requests: list[str] = Field(default_factory=list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None      # read to be refused (not modelled)

    def applies_to(self, result: str) -> bool:
        """Whether the constraint covers the devices of a request row whose allocation results name `result`
        ("<request>" or "<request>/<subrequest>"): every row when `requests` is empty, else a listed request
        (all its subrequests) or a listed subrequest."""
        return not self.requests or result in self.requests or result.partition("/")[0] in self.requests


class DeviceClaim(K8sModel):
    requests: list[DeviceRequest] = Field(default_factory=list)
    constraints: list[DeviceConstraint] = Field(default_factory=list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=list)

    def result_names(self) -> frozenset[str]:
        """The request names an allocation result may give (upstream's requestNames): each request's name, and
        "<request>/<subrequest>" for each subrequest of a prioritized list."""
        return frozenset(name for r in self.requests
                         for name in (r.name, *(f"{r.name}/{s.name}" for s in r.first_available or ())))


class ResourceClaimSpec(K8sModel):
    devices: DeviceClaim = Field(default_factory=DeviceClaim)

    def check(self, path: str) -> None:
        """The API server's validation of the requests (resource.k8s.io/v1 validateDeviceRequest) and what phalanx
        cannot allocate, as "field.path: problem" (raised from the object's own validator so the path is
        complete)."""
        devices = self.devices
        requests_path = f"{path}devices.requests"
        _check_at_most(devices.requests, DEVICE_REQUESTS_MAX_SIZE, requests_path)   # validateSet: the count first
        for i, r in enumerate(devices.requests):
            where = f"{requests_path}[{i}]"
            _check_request_name(r.name, where)
            # An empty firstAvailable counts as absent, as upstream's len(request.FirstAvailable) > 0.
            if r.first_available and r.exactly is not None:
                raise ValueError(f"{where}: Invalid value: null: exactly one of `exactly` or `firstAvailable` is "
                                 f"required, but multiple fields are set")
            if not r.first_available and r.exactly is None:
                raise ValueError(f"{where}: Required value: exactly one of `exactly` or `firstAvailable` is required")
            if r.exactly is not None:
                r.exactly.check(f"{where}.exactly")
                continue
            _check_at_most(r.first_available, FIRST_AVAILABLE_MAX_SIZE, f"{where}.firstAvailable")
            for j, sub in enumerate(r.first_available):
                at = f"{where}.firstAvailable[{j}]"
                _check_request_name(sub.name, at)
                sub.check(at)
            _check_unique_names([sub.name for sub in r.first_available], f"{where}.firstAvailable")
        _check_unique_names([r.name for r in devices.requests], requests_path)
        self._check_constraints(path)
        _check_configurations(devices.config, f"{path}devices.config", devices.result_names())
        self._refuse_unmodelled(path)

    def _refuse_unmodelled(self, path: str) -> None:
        """What the API server accepts and phalanx does not model, refused once the claim is valid (so a claim
        upstream refuses reads upstream's error): admin access (GA in v1.36), consumable capacity (a request's
        capacity, distinctAttribute constraints: DRAConsumableCapacity, beta and on in v1.36). Ignoring them would
        allocate differently."""
        for i, r in enumerate(self.devices.requests):
            where = f"{path}devices.requests[{i}]"
            if r.exactly is not None and r.exactly.admin_access:
                raise ValueError(f"{where}.exactly.adminAccess: admin access is not modelled")
            choices = [("exactly", r.exactly)] if r.exactly is not None else [
                (f"firstAvailable[{j}]", sub) for j, sub in enumerate(r.first_available)]
            for at, choice in choices:
                if choice.capacity is not None:
                    raise ValueError(f"{where}.{at}.capacity: consumable capacity is not modelled")
        for i, constraint in enumerate(self.devices.constraints):
            if constraint.distinct_attribute is not None:
                raise ValueError(f"{path}devices.constraints[{i}].distinctAttribute: distinctAttribute constraints "
                                 f"are not modelled")

    def _check_constraints(self, path: str) -> None:
        """validateDeviceConstraint (resource.k8s.io/v1), the first error."""
        constraints = self.devices.constraints
        _check_at_most(constraints, DEVICE_CONSTRAINTS_MAX_SIZE, f"{path}devices.constraints")
        names = self.devices.result_names()
        for i, constraint in enumerate(constraints):
            where = f"{path}devices.constraints[{i}]"
            _check_request_refs(constraint.requests, f"{where}.requests", names)
            if constraint.match_attribute is not None:
                _check_fully_qualified_name(constraint.match_attribute, f"{where}.matchAttribute")
            elif constraint.distinct_attribute is not None:
                _check_fully_qualified_name(constraint.distinct_attribute, f"{where}.distinctAttribute")
            else:
                # Upstream's wording with DRAConsumableCapacity on (as in v1.36), even though no field is set.
                raise ValueError(f'{where}: Required value: exactly one of "matchAttribute" or "distinctAttribute" '
                                 f'is required, but multiple fields are set')


def _check_request_refs(requests: list[str], path: str, names: frozenset[str]) -> None:
    """validateSet of request references (a constraint's or a configuration's): at most 32, each a request or
    subrequest of the claim, then duplicates."""
    _check_at_most(requests, DEVICE_REQUESTS_MAX_SIZE, path)
    for j, name in enumerate(requests):
        _check_request_ref(name, f"{path}[{j}]", names)
    _check_unique_names(requests, path)


def _check_at_most(items, limit: int, path: str) -> None:
    """field.TooMany of a list or map (validateSlice / validateSet / validateMap check the count first); `path` ""
    for a field validator's own field (pydantic names it)."""
    if len(items) > limit:
        raise ValueError(f"{path + ': ' if path else ''}Too many: {len(items)}: must have at most {limit} items")


def _check_request_name(name: str, where: str) -> None:
    """A request's or subrequest's name: a DNS label."""
    problem = dns_label_problem(name)
    if problem is not None:
        raise ValueError(f"{where}.name: {problem}")


def _check_unique_names(names: list[str], path: str) -> None:
    """validateSet's last step, after every item is checked: a name seen before, named by its index."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise ValueError(f"{path}[{i}]: Duplicate value: {go_quote(name)}")
        seen.add(name)


def _check_request_ref(name: str, where: str, names: frozenset[str]) -> None:
    """validateRequestNameRef: a request of the claim, or "<request>/<subrequest>" of one of its prioritized lists."""
    segments = name.split("/")
    if len(segments) <= 2:
        for segment in segments:
            problem = dns_label_problem(segment)
            if problem is not None:
                raise ValueError(f"{where}: {problem}")
    if len(segments) > 2 or name not in names:
        raise ValueError(f'{where}: Invalid value: "{name}": {_REQUEST_REF}')


def _check_fully_qualified_name(name: str, where: str) -> None:
    """validateFullyQualifiedName: a qualified name that has a domain ("<domain>/<name>")."""
    if not name:
        raise ValueError(f"{where}: Required value: name required")
    _check_qualified_name(name, where)
    if "/" not in name:
        raise ValueError(f'{where}: Invalid value: {go_quote(name)}: a fully qualified name must be a domain and a '
                         f'name separated by a slash')


def _check_qualified_name(name: str, where: str) -> None:
    """validateQualifiedName: a C identifier of at most 32 bytes, optionally after a domain and '/' (a driver name).
    A name with more slashes is accepted, as v1.36's API server accepts it."""
    parts = name.split("/")
    if len(parts) == 1:
        _check_c_identifier(name, where)
    elif len(parts) == 2:
        domain, short = parts
        if not domain:
            raise ValueError(f'{where}: Invalid value: "": the domain must not be empty')
        _check_driver_name(domain, where)
        if not short:
            raise ValueError(f'{where}: Invalid value: "": the name must not be empty')
        _check_c_identifier(short, where)


DRIVER_NAME_MAX_LENGTH = 63           # resource.DriverNameMaxLength


def _check_driver_name(name: str, where: str) -> None:
    """validateDriverName (core's ValidateCSIDriverName): required, at most 63 bytes, a DNS subdomain once lowercased
    (upper case letters are accepted)."""
    if not name:
        raise ValueError(f"{where}: Required value")
    if _byte_length(name) > DRIVER_NAME_MAX_LENGTH:
        raise ValueError(f"{where}: Too long: may not be more than {DRIVER_NAME_MAX_LENGTH} bytes")
    if dns_subdomain_problem(name.lower()) is not None:
        # Lowercasing only fixes upper case letters, so the name as written fails too: shown as written.
        raise ValueError(f"{where}: {dns_subdomain_problem(name)}")


def _check_c_identifier(name: str, where: str) -> None:
    if _byte_length(name) > DEVICE_MAX_ID_LENGTH:
        raise ValueError(f"{where}: Too long: may not be more than {DEVICE_MAX_ID_LENGTH} bytes")
    if not _C_IDENTIFIER.fullmatch(name):
        raise ValueError(f'{where}: Invalid value: {go_quote(name)}: a valid C identifier must start with alphabetic '
                         f"character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  "
                         f"or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')")


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
        check_subdomain_name(self.metadata)
        _default_namespace(self.metadata)
        self.spec.check("spec.")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


class TemplateObjectMeta(PodTemplateMetadata):
    """A claim template's spec.metadata: an ObjectMeta of which only labels and annotations may be set (the claims'
    own); the other fields are read to be refused, as ValidateTemplateObjectMeta does."""
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    self_link: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: Int64 = 0
    creation_timestamp: Any = None
    deletion_timestamp: Any = None
    deletion_grace_period_seconds: Int64 | None = None
    owner_references: list | None = None
    finalizers: list | None = None
    managed_fields: list | None = None

    def forbidden(self) -> str | None:
        """validateFieldAllowList's first field set beyond labels and annotations, named as it names it (the Go field
        name with its first letter lowered: uID), None when none is. Set is unlike Go's zero value, which each
        field's default is: a non-empty string, a non-zero generation, anything given for a pointer, a list (an empty
        one is not nil) or a timestamp."""
        fields = type(self).model_fields
        for name, go_name in _TEMPLATE_META_FIELDS:
            if getattr(self, name) != fields[name].default:
                return go_name
        return None


# ObjectMeta's fields in declaration order, but labels and annotations: (attribute, Go field name lowered at its
# first letter).
_TEMPLATE_META_FIELDS = (("name", "name"), ("generate_name", "generateName"), ("namespace", "namespace"),
                         ("self_link", "selfLink"), ("uid", "uID"), ("resource_version", "resourceVersion"),
                         ("generation", "generation"), ("creation_timestamp", "creationTimestamp"),
                         ("deletion_timestamp", "deletionTimestamp"),
                         ("deletion_grace_period_seconds", "deletionGracePeriodSeconds"),
                         ("owner_references", "ownerReferences"), ("finalizers", "finalizers"),
                         ("managed_fields", "managedFields"))


class ResourceClaimTemplateSpec(K8sModel):
    metadata: TemplateObjectMeta = Field(default_factory=TemplateObjectMeta)     # the claims' labels, annotations
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(K8sModel):
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta
    spec: ResourceClaimTemplateSpec

    @model_validator(mode="after")
    def _object_rules(self) -> ResourceClaimTemplate:
        check_subdomain_name(self.metadata)
        _default_namespace(self.metadata)
        # ValidateTemplateObjectMeta: the annotations, the labels, then no other field set.
        meta = self.spec.metadata
        problem = (annotations_problem(meta.annotations, "spec.metadata.annotations")
                   or labels_problem(meta.labels, "spec.metadata.labels"))
        if problem is not None:
            raise ValueError(problem)
        forbidden = meta.forbidden()
        if forbidden is not None:
            raise ValueError(f"spec.metadata.{forbidden}: Forbidden: cannot be set")
        self.spec.spec.check("spec.spec.")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


class DeviceAttribute(K8sModel):
    """One attribute value; the API server requires exactly one of the fields (checked with the slice, in its
    order: `_check_attribute`)."""
    int_: Int64 | None = Field(default=None, alias="int")
    bool_: StrictBool | None = Field(default=None, alias="bool")
    string: str | None = None
    version: str | None = None
    # List values (DRAListTypeAttributes, alpha and off in v1.36): the API server drops them before validating, so
    # they are read only to be named in a warning (ResourceSlice.dropped) and count for nothing.
    bools: Any = None
    ints: Any = None
    strings: Any = None
    versions: Any = None

    def given(self) -> dict[str, int | bool | str]:
        """The values set, by their JSON names, in the API type's field order."""
        return {kind: v for kind, v in (("int", self.int_), ("bool", self.bool_), ("string", self.string),
                                        ("version", self.version)) if v is not None}

    @property
    def value(self) -> int | bool | str:
        """As CEL reads it (a version as its string)."""
        return next(iter(self.given().values()))

    @property
    def typed(self) -> tuple[str, int | bool | str]:
        """(kind, value): what a matchAttribute constraint compares (upstream: values of different kinds never match;
        versions by their strings, which semver keeps minimal)."""
        return next(iter(self.given().items()))


def _capacity_quantity(raw: object) -> Fraction:
    """decode_quantity, refused (as written) where its milli value, which the allocator reads, is beyond int64."""
    value = decode_quantity(raw)
    try:
        milli_value(value)
    except QuantityError:
        raise QuantityError(f'quantity "{render_value(raw).strip()}" out of range') from None
    return value


class DeviceCapacity(K8sModel):
    value: Annotated[Fraction, BeforeValidator(_capacity_quantity)]
    request_policy: Any = None          # consumable capacity: only with allowMultipleAllocations, which is refused

    @property
    def milli(self) -> int:
        return milli_value(self.value)


class DeviceTaint(K8sModel):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: Any = None


class Counter(K8sModel):
    value: Annotated[Fraction, BeforeValidator(decode_quantity)] = Fraction(0)


class CounterSet(K8sModel):
    """A slice's shared counters (DRAPartitionableDevices, beta and on in v1.36): validated, then refused."""
    name: str = ""
    counters: dict[str, Counter] = Field(default_factory=dict)


class DeviceCounterConsumption(K8sModel):
    counter_set: str = ""
    counters: dict[str, Counter] = Field(default_factory=dict)


class Device(K8sModel):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    consumes_counters: list[DeviceCounterConsumption] = Field(default_factory=list)   # validated, then refused
    # Per-device node selection (perDeviceNodeSelection): validated as upstream, then refused with the slice's.
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: StrictBool | None = None
    taints: list[DeviceTaint] = Field(default_factory=list)
    # DRADeviceBindingConditions (beta, on in v1.36): validated; the scheduler's wait for them is not modelled
    # (bindsToNode changes nothing for a node-local device). None and [] differ in upstream's error values.
    binds_to_node: StrictBool | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None
    allow_multiple_allocations: StrictBool | None = None    # consumable capacity: validated, then refused
    # DRANodeAllocatableResources (alpha and off in v1.36): dropped by the API server; read to be named in a warning.
    node_allocatable_resource_mappings: Any = None


def _by_domain(driver: str, entries: dict, field_name: str) -> dict[str, dict]:
    """{"<domain>/<name>" or "<name>": entry} as CEL's device.attributes / device.capacity: {domain: {name: value}};
    an unqualified name is in the driver's domain."""
    out: dict[str, dict] = {}
    for name, entry in entries.items():
        domain, _, short = name.rpartition("/")
        out.setdefault(domain or driver, {})[short] = getattr(entry, field_name)
    return out


class ResourcePool(K8sModel):
    # Go's zero values where a field is absent (none is defaulted): an absent name or count is refused as upstream.
    name: str = ""
    generation: Int64 = 0
    resource_slice_count: Int64 = 0


class ResourceSliceSpec(K8sModel):
    driver: str = ""
    pool: ResourcePool = Field(default_factory=ResourcePool)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: StrictBool | None = None
    per_device_node_selection: StrictBool | None = None
    shared_counters: list[CounterSet] | None = None
    devices: list[Device] = Field(default_factory=list)


# Limits of k8s.io/api/resource/v1 (types.go, v1.36.0).
POOL_NAME_MAX_LENGTH = 253                    # PoolNameMaxLength
RESOURCE_SLICE_MAX_DEVICES = 128              # ResourceSliceMaxDevices
# ResourceSliceMaxDevicesWithAdvancedFeatures: when a device has taints or consumes counters (or list attributes,
# whose DRAListTypeAttributes gate is off in v1.36, so the API server drops them).
RESOURCE_SLICE_MAX_TAINTED_DEVICES = 64
MAX_ATTRIBUTES_AND_CAPACITIES = 32            # ResourceSliceMaxAttributesAndCapacitiesPerDevice
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64        # DeviceAttributeMaxValueLength (bytes)
DEVICE_TAINTS_MAX_LENGTH = 16                 # DeviceTaintsMaxLength
DEVICE_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")      # sorted, as the API server lists them
RESOURCE_SLICE_MAX_COUNTER_SETS = 8           # ResourceSliceMaxCounterSets
MAX_COUNTERS_PER_SET = 32                     # ResourceSliceMaxCountersPerCounterSet
MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2       # ResourceSliceMaxDeviceCounterConsumptionsPerDevice
MAX_COUNTERS_PER_CONSUMPTION = 32             # ResourceSliceMaxCountersPerDeviceCounterConsumption
BINDING_CONDITIONS_MAX_SIZE = 4               # BindingConditionsMaxSize, BindingFailureConditionsMaxSize
_NODE_LOCAL_ONLY = ("spec.nodeName: phalanx models node-local devices only (nodeSelector, allNodes and "
                    "perDeviceNodeSelection are not modelled)")
_SHARED_COUNTERS = "shared counters (partitionable devices) are not modelled"
_LIST_ATTRIBUTES_OFF = "DRAListTypeAttributes is alpha and off in v1.36"
_NODE_ALLOCATABLE_OFF = "DRANodeAllocatableResources is alpha and off in v1.36"

# A version attribute: semver.org 2.0.0 (major.minor.patch without leading zeros, optional dot-separated
# pre-release identifiers, numeric ones without leading zeros, and build metadata).
_SEMVER_NUMBER = "(0|[1-9][0-9]*)"
_SEMVER_PRERELEASE = "(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER_BUILD = "[0-9A-Za-z-]+"
_SEMVER = re.compile(rf"{_SEMVER_NUMBER}\.{_SEMVER_NUMBER}\.{_SEMVER_NUMBER}"
                     rf"(-{_SEMVER_PRERELEASE}(\.{_SEMVER_PRERELEASE})*)?(\+{_SEMVER_BUILD}(\.{_SEMVER_BUILD})*)?")


def _byte_length(text: str) -> int:
    """len() of Go's string: UTF-8 bytes (the API server's length limits)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _check_pool(pool: ResourcePool) -> None:
    """validateResourcePool: the name (required, at most 253 bytes, each '/'-separated part a DNS subdomain), then
    resourceSliceCount, then generation."""
    if not pool.name:
        raise ValueError("spec.pool.name: Required value")
    if _byte_length(pool.name) > POOL_NAME_MAX_LENGTH:
        raise ValueError(f"spec.pool.name: Too long: may not be more than {POOL_NAME_MAX_LENGTH} bytes")
    for part in pool.name.split("/"):
        problem = dns_subdomain_problem(part)
        if problem is not None:
            raise ValueError(f"spec.pool.name: {problem}")
    if pool.resource_slice_count <= 0:
        raise ValueError(f"spec.pool.resourceSliceCount: Invalid value: {pool.resource_slice_count}: must be greater "
                         f"than zero")
    if pool.generation < 0:
        raise ValueError(f"spec.pool.generation: Invalid value: {pool.generation}: must be greater than or equal to "
                         f"zero")


def _go_terms(terms: list) -> str:
    """Node selector terms as field.Invalid shows them: json.Marshal of the internal core types, which have no json
    tags (Go field names; an absent list is null)."""
    def requirements(term, name: str) -> list | None:
        if name not in term.model_fields_set:
            return None
        return [{"Key": r.key, "Operator": r.operator, "Values": r.values if "values" in r.model_fields_set else None}
                for r in getattr(term, name)]
    return go_json([{"MatchExpressions": requirements(t, "match_expressions"),
                     "MatchFields": requirements(t, "match_fields")} for t in terms])


def _check_node_selection(spec: ResourceSliceSpec) -> None:
    """The node selection rules: nodeName a node name, nodeSelector a valid selector of exactly one term, allNodes
    and perDeviceNodeSelection unset or true, then exactly one of the four. (phalanx models only nodeName: the
    others are refused once the whole slice is valid, _refuse_unmodelled.)"""
    chosen = []
    if spec.node_name is not None:
        if not spec.node_name:
            raise ValueError('spec.nodeName: Invalid value: "": must be either unset or set to a non-empty string')
        chosen.append("`nodeName`")
        problem = dns_subdomain_problem(spec.node_name)          # ValidateNodeName
        if problem is not None:
            raise ValueError(f"spec.nodeName: {problem}")
    if spec.node_selector is not None:
        chosen.append("`nodeSelector`")
        problem = node_selector_problem(spec.node_selector, "spec.nodeSelector")
        if problem is not None:
            raise ValueError(problem)
        terms = spec.node_selector.node_selector_terms
        if len(terms) != 1:           # merging the selectors of devices from several slices needs one term each
            raise ValueError(f"spec.nodeSelector.nodeSelectorTerms: Invalid value: {_go_terms(terms)}: must have "
                             f"exactly one node selector term")
    for name, value in (("allNodes", spec.all_nodes), ("perDeviceNodeSelection", spec.per_device_node_selection)):
        if value is False:
            raise ValueError(f"spec.{name}: Invalid value: false: must be either unset or set to true")
        if value:
            chosen.append(f"`{name}`")
    rule = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not chosen:
        raise ValueError(f"spec: Required value: {rule}")
    if len(chosen) > 1:
        raise ValueError(f"spec: Invalid value: {go_quote('{' + ', '.join(chosen) + '}')}: {rule}, but multiple "
                         f"fields are set")


def _check_attribute(attribute: DeviceAttribute, where: str) -> None:
    """validateDeviceAttribute: a string's and a version's own rules first, then the count of values set."""
    if attribute.string is not None and _byte_length(attribute.string) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        raise ValueError(f"{where}.string: Too long: may not be more than {DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH} bytes")
    if attribute.version is not None:
        if not _SEMVER.fullmatch(attribute.version):
            raise ValueError(f"{where}.version: Invalid value: {go_quote(attribute.version)}: must be a string "
                             f"compatible with semver.org spec 2.0.0")
        if _byte_length(attribute.version) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
            raise ValueError(f"{where}.version: Too long: may not be more than {DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH} "
                             f"bytes")
    given = attribute.given()
    if len(given) != 1:
        shown = go_json(given) if given else '""'
        raise ValueError(f"{where}: Invalid value: {shown}: exactly one value must be specified")


def _check_taint(taint: DeviceTaint, where: str) -> None:
    """validateDeviceTaint: the key a label key (required), a value a label value, the effect required and one of
    DEVICE_TAINT_EFFECTS."""
    problem = label_key_problem(taint.key)
    if problem is not None:
        raise ValueError(f"{where}.key: {problem}")
    problem = label_value_problem(taint.value)
    if problem is not None:
        raise ValueError(f"{where}.value: {problem}")
    if not taint.effect:
        raise ValueError(f"{where}.effect: Required value")
    if taint.effect not in DEVICE_TAINT_EFFECTS:
        raise ValueError(not_supported(f"{where}.effect", taint.effect, DEVICE_TAINT_EFFECTS))


def _check_toleration(toleration: DeviceToleration, where: str) -> None:
    """validateDeviceToleration: a key (when given) a label key; Exists with no value, Equal with a label value;
    an effect (when given) one of DEVICE_TAINT_EFFECTS. Unlike a pod's, an empty key takes either operator and
    tolerationSeconds goes with any effect."""
    if toleration.key:
        problem = label_key_problem(toleration.key)
        if problem is not None:
            raise ValueError(f"{where}.key: {problem}")
    if toleration.operator == "Exists":
        if toleration.value:
            raise ValueError(f"{where}.value: Invalid value: {go_quote(toleration.value)}: must be empty for "
                             f"operator `Exists`")
    elif toleration.operator == "Equal":
        problem = label_value_problem(toleration.value)
        if problem is not None:
            raise ValueError(f"{where}.value: {problem}")
    else:
        raise ValueError(not_supported(f"{where}.operator", toleration.operator, ("Equal", "Exists")))
    if toleration.effect and toleration.effect not in DEVICE_TAINT_EFFECTS:
        raise ValueError(not_supported(f"{where}.effect", toleration.effect, DEVICE_TAINT_EFFECTS))


def _check_counter_groups(groups: list[tuple[str, dict]], limit: int, per_group: int, path: str,
                          name_field: str) -> None:
    """validateSet of a slice's counter sets (validateCounterSet) or of a device's consumptions of them
    (validateDeviceCounterConsumption), given as (name, counters): at most `limit`; each a name (required, a DNS
    label) and 1 to `per_group` counters named by DNS labels (a key's error naming the map; any quantity); then
    duplicate names."""
    _check_at_most(groups, limit, path)
    for i, (name, counters) in enumerate(groups):
        at = f"{path}[{i}]"
        problem = "Required value" if not name else dns_label_problem(name)
        if problem is not None:
            raise ValueError(f"{at}.{name_field}: {problem}")
        if not counters:
            raise ValueError(f"{at}.counters: Required value")
        _check_at_most(counters, per_group, f"{at}.counters")
        for key in counters:
            problem = dns_label_problem(key)
            if problem is not None:
                raise ValueError(f"{at}.counters: {problem}")
    _check_unique_names([name for name, _ in groups], path)


_PER_DEVICE_RULE = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")


def _check_device_node_selection(device: Device, where: str, per_device: bool) -> None:
    """With perDeviceNodeSelection, exactly one of the device's nodeName (a node name), nodeSelector (a valid
    selector; any number of terms) and allNodes (true); without it, none of them."""
    if not per_device:
        if device.node_name is not None or device.node_selector is not None or device.all_nodes is not None:
            raise ValueError(f"{where}: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set "
                             f"if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")
        return
    chosen = []
    if device.node_name is not None:
        if not device.node_name:
            raise ValueError(f'{where}.nodeName: Invalid value: "": must not be empty')
        chosen.append("`nodeName`")
        problem = dns_subdomain_problem(device.node_name)
        if problem is not None:
            raise ValueError(f"{where}.nodeName: {problem}")
    if device.node_selector is not None:
        chosen.append("`nodeSelector`")
        problem = node_selector_problem(device.node_selector, f"{where}.nodeSelector")
        if problem is not None:
            raise ValueError(problem)
    if device.all_nodes is False:
        raise ValueError(f"{where}.allNodes: Invalid value: false: must be either unset or set to true")
    if device.all_nodes:
        chosen.append("`allNodes`")
    if not chosen:
        raise ValueError(f"{where}: Required value: {_PER_DEVICE_RULE}")
    if len(chosen) > 1:
        raise ValueError(f"{where}: Invalid value: {go_quote('{' + ', '.join(chosen) + '}')}: {_PER_DEVICE_RULE}")


def _check_binding_conditions(device: Device, where: str) -> None:
    """validateDeviceBindingParameters: each list at most 4 condition types (label keys), no duplicates, none in
    both, and each only with the other."""
    conditions = device.binding_conditions or []
    failures = device.binding_failure_conditions or []
    for name, values in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        _check_at_most(values, BINDING_CONDITIONS_MAX_SIZE, f"{where}.{name}")
        for k, value in enumerate(values):
            problem = label_key_problem(value)
            if problem is not None:
                raise ValueError(f"{where}.{name}[{k}]: {problem}")
    _check_unique_names(conditions, f"{where}.bindingConditions")
    seen: set[str] = set()
    for k, value in enumerate(failures):
        if value in seen:
            raise ValueError(f"{where}.bindingFailureConditions[{k}]: Duplicate value: {go_quote(value)}")
        seen.add(value)
        if value in conditions:
            raise ValueError(f"{where}.bindingFailureConditions[{k}]: Invalid value: {go_quote(value)}: "
                             f"bindingFailureConditions must not overlap with bindingConditions")
    # The value shown is the other list as written: null when absent, [] when empty.
    if not conditions and failures:
        raise ValueError(f"{where}.bindingConditions: Invalid value: {go_json(device.binding_conditions)}: "
                         f"bindingConditions are required to use bindingFailureConditions")
    if not failures and conditions:
        shown = go_json(device.binding_failure_conditions)
        raise ValueError(f"{where}.bindingFailureConditions: Invalid value: {shown}: bindingFailureConditions are "
                         f"required to use bindingConditions")


def _check_device(device: Device, where: str, per_device: bool) -> None:
    """validateDevice, in its order: name, the number of attributes and capacities, attributes, capacity, taints,
    counter consumptions, node selection, binding conditions."""
    problem = dns_label_problem(device.name)
    if problem is not None:
        raise ValueError(f"{where}.name: {problem}")
    entries = len(device.attributes) + len(device.capacity)
    if entries > MAX_ATTRIBUTES_AND_CAPACITIES:
        raise ValueError(f"{where}: Invalid value: {entries}: the total number of attributes and capacities must not "
                         f"exceed {MAX_ATTRIBUTES_AND_CAPACITIES}")
    # A map's key errors name the map itself, its value errors the key (upstream's validateMap). Upstream walks a Go
    # map, in no fixed order; here the document's order.
    for name, attribute in device.attributes.items():
        _check_qualified_name(name, f"{where}.attributes")
        _check_attribute(attribute, f"{where}.attributes[{name}]")
    for name, capacity in device.capacity.items():
        _check_qualified_name(name, f"{where}.capacity")
        # With allowMultipleAllocations the policy's own rules apply (validateRequestPolicy, not checked here: such
        # a device is refused, _refuse_unmodelled).
        if capacity.request_policy is not None and not device.allow_multiple_allocations:
            raise ValueError(f"{where}.capacity[{name}].requestPolicy: Forbidden: allowMultipleAllocations must be "
                             f"true")
    _check_at_most(device.taints, DEVICE_TAINTS_MAX_LENGTH, f"{where}.taints")
    for k, taint in enumerate(device.taints):
        _check_taint(taint, f"{where}.taints[{k}]")
    _check_counter_groups([(c.counter_set, c.counters) for c in device.consumes_counters],
                          MAX_COUNTER_CONSUMPTIONS_PER_DEVICE, MAX_COUNTERS_PER_CONSUMPTION,
                          f"{where}.consumesCounters", "counterSet")
    _check_device_node_selection(device, where, per_device)
    _check_binding_conditions(device, where)


def _check_devices(spec: ResourceSliceSpec) -> None:
    """validateSet of the devices: the count (lower with taints or counters), every device, then duplicate names."""
    devices = spec.devices
    tainted = any(d.taints or d.consumes_counters for d in devices)
    limit = RESOURCE_SLICE_MAX_TAINTED_DEVICES if tainted else RESOURCE_SLICE_MAX_DEVICES
    _check_at_most(devices, limit, "spec.devices")
    for j, device in enumerate(devices):
        _check_device(device, f"spec.devices[{j}]", bool(spec.per_device_node_selection))
    _check_unique_names([device.name for device in devices], "spec.devices")


def _refuse_unmodelled(spec: ResourceSliceSpec) -> None:
    """What the API server accepts and phalanx does not model, refused once the slice is valid (so a slice upstream
    refuses reads upstream's error): devices not local to one node, consumable capacity, shared counters
    (partitionable devices, KEP-4815: a device consuming counters is not exclusive), all of which ignoring would
    allocate differently."""
    if spec.node_name is None:
        raise ValueError(_NODE_LOCAL_ONLY)
    for j, device in enumerate(spec.devices):
        if device.allow_multiple_allocations:
            raise ValueError(f"spec.devices[{j}].allowMultipleAllocations: consumable capacity (a device shared by "
                             f"several claims) is not modelled")
        if device.consumes_counters:
            raise ValueError(f"spec.devices[{j}].consumesCounters: {_SHARED_COUNTERS}")
    if spec.shared_counters:
        raise ValueError(f"spec.sharedCounters: {_SHARED_COUNTERS}")


class ResourceSlice(K8sModel):
    kind: str = "ResourceSlice"
    metadata: ObjectMeta
    spec: ResourceSliceSpec = Field(default_factory=ResourceSliceSpec)

    @model_validator(mode="after")
    def _object_rules(self) -> ResourceSlice:
        """ValidateResourceSlice (v1.36), the first error in its order: metadata.name, then the spec's driver, pool,
        node selection, devices and shared counters; then what phalanx does not model."""
        check_subdomain_name(self.metadata)
        spec = self.spec
        _check_driver_name(spec.driver, "spec.driver")
        _check_pool(spec.pool)
        _check_node_selection(spec)
        if spec.shared_counters is not None and "devices" in spec.model_fields_set:
            raise ValueError('spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed')
        _check_devices(spec)
        _check_counter_groups([(c.name, c.counters) for c in spec.shared_counters or []],
                              RESOURCE_SLICE_MAX_COUNTER_SETS, MAX_COUNTERS_PER_SET, "spec.sharedCounters", "name")
        _refuse_unmodelled(spec)
        return self

    def dropped(self) -> list[tuple[str, str]]:
        """(field path, why) of each field v1.36's API server drops from a new slice because its feature gate is off
        (dropDisabledFields): list-valued attributes, node allocatable resource mappings. They were not read."""
        out = []
        for j, device in enumerate(self.spec.devices):
            for name, attribute in device.attributes.items():
                out += [(f"spec.devices[{j}].attributes[{name}].{kind}", _LIST_ATTRIBUTES_OFF)
                        for kind in ("bools", "ints", "strings", "versions") if getattr(attribute, kind) is not None]
            if device.node_allocatable_resource_mappings is not None:
                out.append((f"spec.devices[{j}].nodeAllocatableResourceMappings", _NODE_ALLOCATABLE_OFF))
        return out


# -- older versions, as the API server serves them at v1 ----------------------------------------------------
RESOURCE_V1BETA2 = "resource.k8s.io/v1beta2"       # the fields read here are v1's
RESOURCE_V1BETA1 = "resource.k8s.io/v1beta1"
# v1beta1 DeviceRequest fields that v1 moved into `exactly` (k8s.io/api/resource/v1beta1 -> v1 conversion).
_EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                 "capacity")


def _requests_to_v1(devices: Any) -> Any:
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return devices
    requests = []
    for request in devices["requests"]:
        # A v1beta1 request holds its device fields itself, beside firstAvailable: they move under `exactly` unless it
        # is a prioritized list alone (with both, v1's rule "exactly one of" refuses it).
        if isinstance(request, dict) and "exactly" not in request and (
                "firstAvailable" not in request or any(k in request for k in _EXACT_FIELDS)):
            exact = {k: request[k] for k in _EXACT_FIELDS if k in request}
            request = {**{k: v for k, v in request.items() if k not in _EXACT_FIELDS}, "exactly": exact}
        requests.append(request)
    return {**devices, "requests": requests}


def _claim_spec_to_v1(spec: Any) -> Any:
    return {**spec, "devices": _requests_to_v1(spec["devices"])} if isinstance(spec, dict) and "devices" in spec \
        else spec


def v1beta1_to_v1(kind: str, document: dict) -> dict:
    """A resource.k8s.io/v1beta1 document rewritten as v1 (what phalanx reads of it): a request's
    deviceClassName, selectors, allocationMode and count go under `exactly`; a ResourceSlice device's `basic`
    fields (attributes, capacity) move up onto the device. DeviceClass is unchanged."""
    spec = document.get("spec")
    if not isinstance(spec, dict):
        return document
    if kind == "ResourceClaim":
        spec = _claim_spec_to_v1(spec)
    elif kind == "ResourceClaimTemplate" and isinstance(spec.get("spec"), dict):
        spec = {**spec, "spec": _claim_spec_to_v1(spec["spec"])}
    elif kind == "ResourceSlice" and isinstance(spec.get("devices"), list):
        spec = {**spec, "devices": [
            {**{k: v for k, v in d.items() if k != "basic"}, **d["basic"]}
            if isinstance(d, dict) and isinstance(d.get("basic"), dict) else d for d in spec["devices"]]}
    return {**document, "spec": spec}


# -- the device table --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Selection:
    """A selector on every device of a DeviceTable."""
    matched: np.ndarray        # (D,) bool
    failed: np.ndarray         # (D,) bool the evaluation meets a missing key (upstream: a CEL runtime error)
    missing: dict              # device profile -> that error, "no such key: <name>"
    profile: np.ndarray        # (D,) int64 the table's device profiles

    def error(self, row: int) -> str:
        """The error of the evaluation on device `row` (failed there)."""
        return self.missing[int(self.profile[row])]


@dataclass(frozen=True)
class NodePool:
    """A pool as upstream's allocator gathers it for one node (GatherPools): the pool's devices on that node, in
    device order, and whether the pool is complete (every slice of its newest generation present)."""
    driver: str
    pool: str
    complete: bool
    rows: tuple[int, ...]


@dataclass
class DeviceTable:
    """Every device of the node-local ResourceSlices, one row each, in the allocator's order: pools by (driver, pool
    name), a pool's slices by name (v1.36 #136641: GatherPools sorts them lexicographically, so names set the
    first-fit priority), then each slice's devices as listed."""

    node: np.ndarray           # (D,) int64 node id the device is local to; -1 while that node is not in the cluster
    profile: np.ndarray        # (D,) int64 the device's row in `activations` (devices that look alike share one)
    allocated: np.ndarray      # (D,) bool  allocated to a claim (committed, waiting or tentatively placed)
    slots: np.ndarray          # (N, S) int64 device ids of each node in device order, -1 padding (S >= 1)
    node_names: tuple          # (D,) the node each device's slice names
    keys: tuple                # (D,) (driver, pool, device name)
    activations: list = field(default_factory=list)      # (P,) CEL `device` values: {driver, attributes, capacity}
    index: dict = field(default_factory=dict)            # (driver, pool, device) -> row
    _selected: dict = field(default_factory=dict)        # CEL expression -> Selection
    usable: np.ndarray | None = None   # (D,) bool device of a complete pool (None: all); others are in no node's slots
    incomplete_nodes: tuple = ()       # names of nodes with a slice of an incomplete pool (All requests fail there)
    incomplete: np.ndarray | None = None    # (N,) bool those nodes, by node id
    node_pools: dict = field(default_factory=dict)   # node name -> tuple[NodePool], pools by (driver, pool name)
    taints: dict = field(default_factory=dict)       # device row -> its NoSchedule/NoExecute taints (key, value, effect)
    # (P,) each profile's attributes as its slice names them ("<name>" or "<domain>/<name>") -> (kind, value)
    typed: list = field(default_factory=list)
    _codes: dict = field(default_factory=dict)       # fully qualified attribute name -> (D,) codes (attribute_codes)

    @property
    def size(self) -> int:
        return int(self.node.shape[0])

    @classmethod
    def build(cls, slices: list[ResourceSlice], node_index: dict[str, int]) -> DeviceTable:
        # A pool's slices of an older generation than its newest are out of date: left out. A pool with fewer slices
        # of its newest generation than resourceSliceCount is incomplete (being updated): upstream's allocator
        # (GatherPools) allocates none of its devices, and a request for All devices fails on its nodes.
        newest: dict[tuple, int] = {}
        for rs in slices:
            key = (rs.spec.driver, rs.spec.pool.name)
            newest[key] = max(newest.get(key, rs.spec.pool.generation), rs.spec.pool.generation)
        slices = sorted((rs for rs in slices if rs.spec.pool.generation == newest[(rs.spec.driver, rs.spec.pool.name)]),
                        key=lambda rs: (rs.spec.driver, rs.spec.pool.name, rs.metadata.name))
        current: dict[tuple, list] = {}
        for rs in slices:
            current.setdefault((rs.spec.driver, rs.spec.pool.name), []).append(rs)
        complete = {key: len(group) == group[0].spec.pool.resource_slice_count for key, group in current.items()}
        profiles: dict[str, int] = {}
        activations, profile, typed = [], [], []
        names, keys, index, usable, taints = [], [], {}, [], {}
        pools: dict[str, dict[tuple, list[int]]] = {}       # node name -> pool -> device rows, in order
        for rs in slices:
            spec = rs.spec
            on_node = pools.setdefault(spec.node_name, {}).setdefault((spec.driver, spec.pool.name), [])
            for j, dev in enumerate(spec.devices):
                key = (spec.driver, spec.pool.name, dev.name)
                if key in index:
                    raise InputError(f"ResourceSlice {rs.metadata.name}: spec.devices[{j}].name: duplicate device "
                                     f"{dev.name!r} in pool {spec.pool.name!r} of driver {spec.driver!r}")
                index[key] = len(keys)
                device = {"driver": spec.driver, "attributes": _by_domain(spec.driver, dev.attributes, "value"),
                          "capacity": _by_domain(spec.driver, dev.capacity, "milli")}
                attributes = {name: a.typed for name, a in dev.attributes.items()}
                # CEL reads a version as its string; the kinds keep a version and a string apart for constraints.
                seen = repr((device, attributes))
                if seen not in profiles:
                    profiles[seen] = len(activations)
                    activations.append(device)
                    typed.append(attributes)
                profile.append(profiles[seen])
                # DRADeviceTaints (beta, on in v1.36): a NoSchedule or NoExecute taint keeps the device from every
                # request that does not tolerate it; effect None changes nothing.
                hard = [(t.key, t.value, t.effect) for t in dev.taints if t.effect in ("NoSchedule", "NoExecute")]
                if hard:
                    taints[len(keys)] = hard
                on_node.append(len(keys))
                names.append(spec.node_name)
                keys.append(key)
                usable.append(complete[(spec.driver, spec.pool.name)])
        d = len(keys)
        incomplete_nodes = tuple(sorted({rs.spec.node_name for rs in slices
                                         if not complete[(rs.spec.driver, rs.spec.pool.name)]}))
        table = cls(node=np.full(d, -1, np.int64), profile=np.array(profile, np.int64).reshape(d),
                    allocated=np.zeros(d, bool), slots=np.full((len(node_index), 1), -1, np.int64),
                    node_names=tuple(names), keys=tuple(keys), activations=activations, index=index,
                    usable=None if all(usable) else np.array(usable, bool).reshape(d),
                    incomplete_nodes=incomplete_nodes, taints=taints, typed=typed,
                    node_pools={node: tuple(NodePool(driver, pool, complete[(driver, pool)], tuple(rows))
                                            for (driver, pool), rows in by_pool.items())
                                for node, by_pool in pools.items()})
        table.relink(node_index)
        return table

    def selected(self, expression: str) -> Selection:
        """The CEL selector on every device (evaluated once per distinct device, then kept). ValueError for a
        runtime error other than a missing key."""
        hit = self._selected.get(expression)
        if hit is None:
            try:
                result = cel_matches(expression, self.activations)
            except CelUndeclared as error:
                # Upstream's compiler refuses it before any device is seen.
                raise ValueError(f'CEL expression "{expression}": compilation failed: {error.detail}') from None
            except CelRuntimeError as error:
                # Upstream: "selector #i on device <driver>/<pool>/<device>: CEL runtime error: ..." (the first
                # device, in input order, that looks like the one it failed on).
                row = int(np.flatnonzero(self.profile == error.index)[0])
                raise ValueError(f'CEL expression "{expression}" on device {"/".join(self.keys[row])}: CEL runtime '
                                 f'error: {error.detail}') from None
            failed = np.zeros(len(self.activations), bool)
            failed[list(result.missing)] = True
            hit = self._selected[expression] = Selection(result.matched[self.profile], failed[self.profile],
                                                         result.missing, self.profile)
        return hit

    def attribute_codes(self, name: str) -> np.ndarray:
        """(D,) int64 each device's value of the fully qualified attribute `name` as a code (equal codes: equal kind
        and value), -1 where the device lacks it. Looked up as upstream's allocator does (lookupAttribute): the name
        itself, else, when its domain is the device's driver, the part after the domain."""
        hit = self._codes.get(name)
        if hit is None:
            domain, _, short = name.partition("/")
            values: dict[tuple, int] = {}
            per_profile = []
            for device, attributes in zip(self.activations, self.typed):
                value = attributes.get(name)
                if value is None and domain == device["driver"]:
                    value = attributes.get(short)
                per_profile.append(-1 if value is None else values.setdefault(value, len(values)))
            hit = self._codes[name] = np.array(per_profile, np.int64).reshape(len(per_profile))[self.profile]
        return hit

    def relink(self, node_index: dict[str, int]) -> None:
        """Node ids after nodes were added or removed (devices are identified by node name)."""
        self.node = np.array([node_index.get(n, -1) for n in self.node_names], np.int64).reshape(self.size)
        n = len(node_index)
        on_node = self.node if self.usable is None else np.where(self.usable, self.node, -1)
        per_node = np.bincount(on_node[on_node >= 0], minlength=n) if n else np.zeros(0, np.int64)
        s = max(1, int(per_node.max()) if n else 1)
        slots = np.full((n, s), -1, np.int64)
        fill = np.zeros(n, np.int64)
        for d, node in enumerate(on_node.tolist()):
            if node >= 0:
                slots[node, fill[node]] = d
                fill[node] += 1
        self.slots = slots
        incomplete = np.zeros(n, bool)
        for name in self.incomplete_nodes:
            if name in node_index:
                incomplete[node_index[name]] = True
        self.incomplete = incomplete

