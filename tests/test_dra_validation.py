"""DRA objects as v1.36's API server validates them, beyond tests/test_dra_errors.py: a ResourceSlice's node
selectors, per-device node selection, counters (consumed and shared), binding conditions and the fields its gates
drop; the opaque configuration of claims, claim templates and device classes; a class's selectors.

Expected messages are written by hand from upstream's pkg/apis/resource/validation/validation.go (the field.Error
text of the first error in its order) and, where they have the case, its validation_resourceslice_test.go,
validation_resourceclaim_test.go and validation_deviceclass_test.go; DNS names, label keys and label values read in
phalanx's words for those rules. What upstream accepts but phalanx does not model (devices not local to one node,
counters, consumable capacity) is refused only once the object is valid, so an object upstream refuses reads
upstream's error.
"""
from __future__ import annotations

import pytest

from phalanx.cluster_models import parse_objects
from test_dra_errors import _LABEL, _SUBDOMAIN, _device, _load_error, _slice
_NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
              "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
                "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
_NODE_LOCAL_ONLY = ("spec.nodeName: phalanx models node-local devices only (nodeSelector, allNodes and "
                    "perDeviceNodeSelection are not modelled)")
_SHARED = "shared counters (partitionable devices) are not modelled"
_PER_DEVICE = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
               "is set to true in the ResourceSlice spec")
_REQUEST_REF = ("must be the name of a request in the claim or the name of a request and a subrequest separated by "
                "'/'")


def _selector(*terms: dict) -> dict:
    return {"nodeSelectorTerms": list(terms)}


def _term(key: str = "zone", operator: str = "In", values: list | None = None) -> dict:
    requirement = {"key": key, "operator": operator}
    if values is not None:
        requirement["values"] = values
    return {"matchExpressions": [requirement]}


def _off_node(devices: list | None = None, **spec) -> dict:
    """A slice selecting its nodes some other way than nodeName (its devices gpu0 unless given)."""
    return _slice(devices, **{"nodeName": None, **spec})


def _counters(n: int) -> dict:
    return {f"c{i}": {"value": "1"} for i in range(n)}


def _counter_slice(counter_sets: list) -> dict:
    """A slice of shared counters only (it may not also list devices)."""
    doc = _slice(sharedCounters=counter_sets)
    del doc["spec"]["devices"]
    return doc


def _claim(devices: dict, kind: str = "ResourceClaim") -> dict:
    spec = {"devices": devices}
    return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": "c"},
            "spec": {"spec": spec} if kind == "ResourceClaimTemplate" else spec}


def _exact(name: str = "r") -> dict:
    return {"name": name, "exactly": {"deviceClassName": "gpu"}}


def _opaque(driver: str = "d.example.com", requests: list | None = None, **fields) -> dict:
    """A configuration of the driver with parameters {"foo": 42} (`fields` replace them), for `requests` if given."""
    config = {"opaque": {"driver": driver, "parameters": {"foo": 42}, **fields}}
    return config if requests is None else {"requests": requests, **config}


def _device_class(**spec) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": spec}


# -- ResourceSlice -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc, message", [
    # spec.nodeSelector: ValidateNodeSelector (at least one term; each requirement's values, key, label values), then
    # exactly one term (its value as json.Marshal shows the internal core types: Go field names, null when absent)
    (_off_node(nodeSelector={}), "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node "
                                 "selector term"),
    (_off_node(nodeSelector=_selector()), "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least "
                                          "one node selector term"),
    (_off_node(nodeSelector=_selector(_term(values=[]))),
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when "
     "`operator` is 'In' or 'NotIn'"),
    (_off_node(nodeSelector=_selector(_term(operator="Exists", values=["a"]))),
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: may not be specified when "
     "`operator` is 'Exists' or 'DoesNotExist'"),
    (_off_node(nodeSelector=_selector(_term(key="a b", values=["x"]))),
     f'spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].key: {_NAME_PART} (got "a b")'),
    (_off_node(nodeSelector=_selector(_term(values=["a", "b c"]))),
     f'spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[1]: {_LABEL_VALUE} (got "b c")'),
    (_off_node(nodeSelector=_selector({"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]})),
     'spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field '
     'selector key'),
    (_off_node(nodeSelector=_selector(_term(values=["a"]), {"matchExpressions": []})),
     'spec.nodeSelector.nodeSelectorTerms: Invalid value: [{"MatchExpressions":[{"Key":"zone","Operator":"In",'
     '"Values":["a"]}],"MatchFields":null},{"MatchExpressions":[],"MatchFields":null}]: must have exactly one node '
     'selector term'),
    # per-device node selection (perDeviceNodeSelection: DRAPartitionableDevices, beta and on in v1.36)
    (_off_node(perDeviceNodeSelection=True), f"spec.devices[0]: Required value: {_PER_DEVICE}"),
    (_off_node(_device(nodeName=""), perDeviceNodeSelection=True),
     'spec.devices[0].nodeName: Invalid value: "": must not be empty'),
    (_off_node(_device(nodeName="N1"), perDeviceNodeSelection=True), f'spec.devices[0].nodeName: {_SUBDOMAIN} '
                                                                     f'(got "N1")'),
    (_off_node(_device(allNodes=False), perDeviceNodeSelection=True),
     "spec.devices[0].allNodes: Invalid value: false: must be either unset or set to true"),
    (_off_node(_device(nodeName="n1", allNodes=True), perDeviceNodeSelection=True),
     f'spec.devices[0]: Invalid value: "{{`nodeName`, `allNodes`}}": {_PER_DEVICE}'),
    (_off_node(_device(nodeSelector=_selector()), perDeviceNodeSelection=True),
     "spec.devices[0].nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term"),
    # a device's consumed counters (validateDeviceCounterConsumption over validateSet: at most 2, then each, then
    # duplicate counter sets)
    (_slice(_device(consumesCounters=[{"counterSet": f"s{i}", "counters": _counters(1)} for i in range(3)])),
     "spec.devices[0].consumesCounters: Too many: 3: must have at most 2 items"),
    (_slice(_device(consumesCounters=[{"counters": _counters(1)}])),
     "spec.devices[0].consumesCounters[0].counterSet: Required value"),
    (_slice(_device(consumesCounters=[{"counterSet": "Set", "counters": _counters(1)}])),
     f'spec.devices[0].consumesCounters[0].counterSet: {_LABEL} (got "Set")'),
    (_slice(_device(consumesCounters=[{"counterSet": "s"}])), "spec.devices[0].consumesCounters[0].counters: "
                                                              "Required value"),
    (_slice(_device(consumesCounters=[{"counterSet": "s", "counters": {"mem_1": {"value": "1"}}}])),
     f'spec.devices[0].consumesCounters[0].counters: {_LABEL} (got "mem_1")'),
    (_slice(_device(consumesCounters=[{"counterSet": "s", "counters": _counters(33)}])),
     "spec.devices[0].consumesCounters[0].counters: Too many: 33: must have at most 32 items"),
    (_slice(_device(consumesCounters=[{"counterSet": "s", "counters": _counters(1)}] * 2)),
     'spec.devices[0].consumesCounters[1]: Duplicate value: "s"'),
    # a device consuming counters lowers the slice's limit to 64 devices
    (_slice([{"name": f"d{i}", **({"consumesCounters": [{"counterSet": "s", "counters": _counters(1)}]} if i == 0
                                  else {})} for i in range(65)]),
     "spec.devices: Too many: 65: must have at most 64 items"),
    # shared counters (validateCounterSet over validateSet: at most 8, then each, then duplicate names)
    (_slice(sharedCounters=[{"name": "s", "counters": _counters(1)}]),
     'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'),
    (_slice([], sharedCounters=[{"counters": _counters(1)}]),
     'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'),
    # binding conditions (validateDeviceBindingParameters; DRADeviceBindingConditions, beta and on in v1.36)
    (_slice(_device(bindingConditions=list("abcde"), bindingFailureConditions=["f"])),
     "spec.devices[0].bindingConditions: Too many: 5: must have at most 4 items"),
    (_slice(_device(bindingConditions=["a"], bindingFailureConditions=list("bcdef"))),
     "spec.devices[0].bindingFailureConditions: Too many: 5: must have at most 4 items"),
    (_slice(_device(bindingConditions=["Ready now"], bindingFailureConditions=["f"])),
     f'spec.devices[0].bindingConditions[0]: {_NAME_PART} (got "Ready now")'),
    (_slice(_device(bindingConditions=["a"], bindingFailureConditions=["-f"])),
     f'spec.devices[0].bindingFailureConditions[0]: {_NAME_PART} (got "-f")'),
    (_slice(_device(bindingConditions=["a", "a"], bindingFailureConditions=["f"])),
     'spec.devices[0].bindingConditions[1]: Duplicate value: "a"'),
    (_slice(_device(bindingConditions=["a"], bindingFailureConditions=["f", "f"])),
     'spec.devices[0].bindingFailureConditions[1]: Duplicate value: "f"'),
    (_slice(_device(bindingConditions=["a"], bindingFailureConditions=["a"])),
     'spec.devices[0].bindingFailureConditions[0]: Invalid value: "a": bindingFailureConditions must not overlap '
     'with bindingConditions'),
    (_slice(_device(bindingFailureConditions=["f"])),
     "spec.devices[0].bindingConditions: Invalid value: null: bindingConditions are required to use "
     "bindingFailureConditions"),
    (_slice(_device(bindingConditions=[], bindingFailureConditions=["f"])),
     "spec.devices[0].bindingConditions: Invalid value: []: bindingConditions are required to use "
     "bindingFailureConditions"),
    (_slice(_device(bindingConditions=["a"])),
     "spec.devices[0].bindingFailureConditions: Invalid value: null: bindingFailureConditions are required to use "
     "bindingConditions"),
    # list-valued attributes are dropped (DRAListTypeAttributes off): an attribute with nothing else has no value
    (_slice(_device(attributes={"x": {"strings": ["a"]}})),
     'spec.devices[0].attributes[x]: Invalid value: "": exactly one value must be specified'),
])
def test_resource_slice_rules(doc, message):
    assert _load_error(doc) == f"ResourceSlice s: {message}"


@pytest.mark.parametrize("counter_sets, message", [
    ([{"name": f"s{i}", "counters": _counters(1)} for i in range(9)],
     "spec.sharedCounters: Too many: 9: must have at most 8 items"),
    ([{"counters": _counters(1)}], "spec.sharedCounters[0].name: Required value"),
    ([{"name": "s_1", "counters": _counters(1)}], f'spec.sharedCounters[0].name: {_LABEL} (got "s_1")'),
    ([{"name": "s"}], "spec.sharedCounters[0].counters: Required value"),
    ([{"name": "s", "counters": {}}], "spec.sharedCounters[0].counters: Required value"),
    ([{"name": "s", "counters": {"Mem": {"value": "1"}}}], f'spec.sharedCounters[0].counters: {_LABEL} (got "Mem")'),
    ([{"name": "s", "counters": _counters(33)}], "spec.sharedCounters[0].counters: Too many: 33: must have at most 32 "
                                                 "items"),
    ([{"name": "s", "counters": _counters(1)}, {"name": "s", "counters": _counters(1)}, {"name": "T"}],
     f'spec.sharedCounters[2].name: {_LABEL} (got "T")'),       # every set is checked before duplicate names
    ([{"name": "s", "counters": _counters(1)}, {"name": "s", "counters": _counters(1)}],
     'spec.sharedCounters[1]: Duplicate value: "s"'),
])
def test_shared_counter_rules(counter_sets, message):
    assert _load_error(_counter_slice(counter_sets)) == f"ResourceSlice s: {message}"


@pytest.mark.parametrize("doc, message", [
    # upstream's checks of what phalanx refuses come first: a valid slice is then refused as not modelled
    (_off_node(nodeSelector=_selector(_term(values=["a"]))), _NODE_LOCAL_ONLY),
    (_off_node(allNodes=True), _NODE_LOCAL_ONLY),
    (_off_node(_device(allNodes=True), perDeviceNodeSelection=True), _NODE_LOCAL_ONLY),
    (_off_node(_device(nodeSelector=_selector(_term(values=["a"]), _term(values=["b"]))), perDeviceNodeSelection=True),
     _NODE_LOCAL_ONLY),                                   # a device's selector may have several terms
    (_slice(_device(consumesCounters=[{"counterSet": "s", "counters": _counters(32)}])),
     f"spec.devices[0].consumesCounters: {_SHARED}"),
    (_counter_slice([{"name": f"s{i}", "counters": _counters(32)} for i in range(8)]),
     f"spec.sharedCounters: {_SHARED}"),
    # ... but a slice upstream refuses reads upstream's error, wherever the unmodelled field is
    (_off_node([{"name": "gpu0"}, {"name": "BAD"}], allNodes=True), f'spec.devices[1].name: {_LABEL} (got "BAD")'),
    (_off_node(_device(allNodes=True, taints=[{"key": "k"}]), perDeviceNodeSelection=True),
     "spec.devices[0].taints[0].effect: Required value"),
    (_slice(_device(allowMultipleAllocations=True, taints=[{"key": "k"}])),
     "spec.devices[0].taints[0].effect: Required value"),
    (_slice([{"name": "a", "consumesCounters": [{"counterSet": "s", "counters": _counters(1)}]}, {"name": "a"}]),
     'spec.devices[1]: Duplicate value: "a"'),
    # within a device: taints, then counters, then node selection, then binding conditions
    (_slice(_device(taints=[{"key": "k"}], consumesCounters=[{"counterSet": "S", "counters": _counters(1)}])),
     "spec.devices[0].taints[0].effect: Required value"),
    (_slice(_device(consumesCounters=[{"counterSet": "S", "counters": _counters(1)}], nodeName="n1")),
     f'spec.devices[0].consumesCounters[0].counterSet: {_LABEL} (got "S")'),
    (_slice(_device(nodeName="n1", bindingConditions=["a"])),
     "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
     "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"),
    # the node selection before the devices, the devices before the shared counters
    (_off_node([{"name": "BAD"}], nodeSelector=_selector()),
     "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term"),
    (_slice([{"name": "BAD"}], sharedCounters=[{"name": "S"}]),
     'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'),
])
def test_resource_slice_order(doc, message):
    assert _load_error(doc) == f"ResourceSlice s: {message}"


@pytest.mark.parametrize("doc", [
    _slice(_device(bindingConditions=["example.com/ready", "b"], bindingFailureConditions=["example.com/failed"],
                   bindsToNode=True)),
    _slice(_device(bindingConditions=[], bindingFailureConditions=[])),
    _slice(_device(taints=[{"key": "k", "effect": "None"}]) + [{"name": f"d{i}"} for i in range(63)]),
])
def test_resource_slices_the_api_server_accepts(doc):
    assert _load_error(doc) is None


def test_fields_of_gates_off_in_v136_are_dropped_with_a_warning():
    # DRAListTypeAttributes and DRANodeAllocatableResources are alpha and off: the API server drops the fields (a
    # list next to a scalar leaves the scalar; list attributes do not count toward the 64-device limit).
    doc = _slice([{"name": "gpu0", "attributes": {"model": {"string": "a100", "strings": ["a100", "h100"]},
                                                  "ids": {"int": 1, "ints": []}},
                   "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": "cores"}}}]
                 + [{"name": f"d{i}"} for i in range(127)])
    objects = parse_objects([doc])
    assert objects.warnings == [
        "ResourceSlice s: spec.devices[0].attributes[model].strings: dropped, as the API server drops it "
        "(DRAListTypeAttributes is alpha and off in v1.36)",
        "ResourceSlice s: spec.devices[0].attributes[ids].ints: dropped, as the API server drops it "
        "(DRAListTypeAttributes is alpha and off in v1.36)",
        "ResourceSlice s: spec.devices[0].nodeAllocatableResourceMappings: dropped, as the API server drops it "
        "(DRANodeAllocatableResources is alpha and off in v1.36)",
    ]
    device = objects.resource_slices[0].spec.devices[0]
    assert {name: a.value for name, a in device.attributes.items()} == {"model": "a100", "ids": 1}


# -- ResourceClaim / ResourceClaimTemplate: config ------------------------------------------------------------------
@pytest.mark.parametrize("config, message", [
    ([_opaque()] * 33, "spec.devices.config: Too many: 33: must have at most 32 items"),
    ([{}], "spec.devices.config[0].opaque: Required value"),
    ([{"requests": ["r"]}], "spec.devices.config[0].opaque: Required value"),
    ([_opaque(driver="")], "spec.devices.config[0].opaque.driver: Required value"),
    ([_opaque(driver="a" * 64)], "spec.devices.config[0].opaque.driver: Too long: may not be more than 63 bytes"),
    ([_opaque(driver="d_x.example.com")], f'spec.devices.config[0].opaque.driver: {_SUBDOMAIN} (got '
                                          f'"d_x.example.com")'),
    ([{"opaque": {"driver": "d.example.com"}}], "spec.devices.config[0].opaque.parameters: Required value"),
    ([_opaque(parameters=None)], "spec.devices.config[0].opaque.parameters: Required value"),
    ([_opaque(parameters="hello-world")],
     'spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object'),
    ([_opaque(parameters=[1])],
     'spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object'),
    ([_opaque(parameters={"str": "x" * 10231})],          # {"str":"..."}: 10 + 10231 bytes
     "spec.devices.config[0].opaque.parameters: Too long: may not be more than 10240 bytes"),
    # the requests it applies to: validateSet of validateRequestNameRef
    ([_opaque(requests=["x"])], f'spec.devices.config[0].requests[0]: Invalid value: "x": {_REQUEST_REF}'),
    ([_opaque(requests=["r/s"])], f'spec.devices.config[0].requests[0]: Invalid value: "r/s": {_REQUEST_REF}'),
    ([_opaque(requests=["R"])], f'spec.devices.config[0].requests[0]: {_LABEL} (got "R")'),
    ([_opaque(requests=["r", "r"])], 'spec.devices.config[0].requests[1]: Duplicate value: "r"'),
    ([_opaque(requests=["r", "r", "x"])], f'spec.devices.config[0].requests[2]: Invalid value: "x": {_REQUEST_REF}'),
    ([_opaque(requests=["r"] * 33)], "spec.devices.config[0].requests: Too many: 33: must have at most 32 items"),
    ([_opaque(), _opaque(driver="")], "spec.devices.config[1].opaque.driver: Required value"),
])
def test_claim_config_rules(config, message):
    assert _load_error(_claim({"requests": [_exact()], "config": config})) == f"ResourceClaim default/c: {message}"
    template = _claim({"requests": [_exact()], "config": config}, kind="ResourceClaimTemplate")
    assert _load_error(template) == f"ResourceClaimTemplate default/c: spec.{message}"


def test_claim_config_after_requests_and_constraints():
    # validateDeviceClaim: the requests, the constraints, then the configuration
    bad_config = [{}]
    assert _load_error(_claim({"requests": [{"name": "r"}], "config": bad_config})) == (
        "ResourceClaim default/c: spec.devices.requests[0]: Required value: exactly one of `exactly` or "
        "`firstAvailable` is required")
    assert _load_error(_claim({"requests": [_exact()], "constraints": [{"requests": ["x"]}], "config": bad_config})) \
        == f'ResourceClaim default/c: spec.devices.constraints[0].requests[0]: Invalid value: "x": {_REQUEST_REF}'


@pytest.mark.parametrize("devices, message", [
    # admin access (GA) and consumable capacity (beta, on) are refused once the claim is valid ...
    ({"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}]},
     "spec.devices.requests[0].exactly.adminAccess: admin access is not modelled"),
    ({"requests": [{"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "gpu"},
                                                    {"name": "t", "deviceClassName": "gpu",
                                                     "capacity": {"requests": {"mem": "1Gi"}}}]}]},
     "spec.devices.requests[0].firstAvailable[1].capacity: consumable capacity is not modelled"),
    ({"requests": [_exact()], "constraints": [{"distinctAttribute": "example.com/id"}]},
     "spec.devices.constraints[0].distinctAttribute: distinctAttribute constraints are not modelled"),
    # ... so a claim upstream refuses reads upstream's error
    ({"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}, {"name": "R"}]},
     f'spec.devices.requests[1].name: {_LABEL} (got "R")'),
    ({"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"mem": "1"}}}}],
      "config": [{}]}, "spec.devices.config[0].opaque: Required value"),
    ({"requests": [_exact()], "constraints": [{"distinctAttribute": "id"}]},
     'spec.devices.constraints[0].distinctAttribute: Invalid value: "id": a fully qualified name must be a domain '
     'and a name separated by a slash'),
])
def test_claim_features_phalanx_does_not_model(devices, message):
    assert _load_error(_claim(devices)) == f"ResourceClaim default/c: {message}"


@pytest.mark.parametrize("devices", [
    {"requests": [_exact()], "config": [_opaque(), _opaque(requests=["r"], parameters={})]},
    {"requests": [{"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "gpu"}]}],
     "config": [_opaque(requests=["r/s", "r"], parameters={"str": "x" * 10230})]},       # 10240 bytes: at the limit
    {"requests": [_exact()], "config": [_opaque(driver="GPU.example.com")] * 32},
    # a request's tolerations have no limit (the hand-written validation counts none; "at most 16" is a comment)
    {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu",
                                            "tolerations": [{"key": "k", "operator": "Exists"}] * 17}}]},
])
def test_claims_the_api_server_accepts(devices):
    assert _load_error(_claim(devices)) is None
    assert _load_error(_claim(devices, kind="ResourceClaimTemplate")) is None


@pytest.mark.parametrize("metadata, message", [
    # ValidateTemplateObjectMeta: the annotations, then the labels of the claims made from the template
    ({"labels": {"app": "a b"}}, f'spec.metadata.labels: {_LABEL_VALUE} (got "a b")'),
    ({"labels": {"a b": "x"}}, f'spec.metadata.labels: {_NAME_PART} (got "a b")'),
    ({"annotations": {"a b": "x"}, "labels": {"app": "a b"}},
     f'spec.metadata.annotations: Invalid value: "a b": {_NAME_PART} (got "a b")'),
    ({"annotations": {"a": "x" * (256 * 1024)}}, "spec.metadata.annotations: Too long: may not be more than 262144 "
                                                  "bytes"),
    # then validateFieldAllowList: any other ObjectMeta field not Go's zero value, named by its Go field name with
    # the first letter lowered (UID: uID), in declaration order, after the labels' errors
    ({"name": "x"}, "spec.metadata.name: Forbidden: cannot be set"),
    ({"uid": "0b1c"}, "spec.metadata.uID: Forbidden: cannot be set"),
    ({"generation": 2, "namespace": "default"}, "spec.metadata.namespace: Forbidden: cannot be set"),
    ({"finalizers": []}, "spec.metadata.finalizers: Forbidden: cannot be set"),        # an empty slice is not nil
    ({"deletionGracePeriodSeconds": 0}, "spec.metadata.deletionGracePeriodSeconds: Forbidden: cannot be set"),
    ({"labels": {"a b": "x"}, "name": "x"}, f'spec.metadata.labels: {_NAME_PART} (got "a b")'),
])
def test_claim_template_metadata_rules(metadata, message):
    template = _claim({"requests": [_exact()]}, kind="ResourceClaimTemplate")
    template["spec"]["metadata"] = metadata
    assert _load_error(template) == f"ResourceClaimTemplate default/c: {message}"
    template["spec"]["metadata"] = {"labels": {"app": "gpu"}, "annotations": {"example.com/Note": "any text"}}
    assert _load_error(template) is None
    # Zero values are not set: an empty name, generation 0, a null timestamp.
    template["spec"]["metadata"] = {"name": "", "generation": 0, "creationTimestamp": None, "labels": {"app": "gpu"}}
    assert _load_error(template) is None


# -- DeviceClass ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, message", [
    # TestValidateClass "selectors": a selector without cel
    ({"selectors": [{"cel": {"expression": "true"}}, {}]}, "spec.selectors[1].cel: Required value"),
    # TestValidateClass "configuration" (parameters' lengths are of the JSON kubectl sends: compact, keys sorted)
    ({"config": [_opaque(driver="gpu"), {"opaque": {}}]}, "spec.config[1].opaque.driver: Required value"),
    ({"config": [{"opaque": {"driver": "gpu"}}]}, "spec.config[0].opaque.parameters: Required value"),
    ({"config": [_opaque(parameters="hello-world")]},
     'spec.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object'),
    ({"config": [_opaque(parameters=None)]}, "spec.config[0].opaque.parameters: Required value"),
    ({"config": [{}]}, "spec.config[0].opaque: Required value"),
    ({"config": [_opaque(parameters={"str": "x" * 10231})]},
     "spec.config[0].opaque.parameters: Too long: may not be more than 10240 bytes"),
    # TestValidateClass "too-many-configs"
    ({"config": [_opaque()] * 33}, "spec.config: Too many: 33: must have at most 32 items"),
    # validateDeviceClassSpec's order: selectors, config, extendedResourceName
    ({"config": [{}], "extendedResourceName": "example.com"}, "spec.config[0].opaque: Required value"),
    ({"selectors": [{}], "config": [{}]}, "spec.selectors[0].cel: Required value"),
    ({"extendedResourceName": "example.com"},
     'spec.extendedResourceName: Invalid value: "example.com": must be a valid extended resource name'),
])
def test_device_class_rules(spec, message):
    assert _load_error(_device_class(**spec)) == f"DeviceClass gpu: {message}"


def test_device_classes_the_api_server_accepts():
    spec = {"selectors": [{"cel": {"expression": "true"}}],
            "config": [_opaque(parameters={"str": "x" * 10230})] + [_opaque()] * 31,
            "extendedResourceName": "example.com/gpu"}
    assert _load_error(_device_class(**spec)) is None
