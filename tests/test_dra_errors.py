"""DRA input that used to crash or pass: `phalanx schedule` / `phalanx explain` answer bad input with exit 2 and one
line `error: <Kind> <ns/name>: <field path>: <message>`, never a traceback, and explain renders a pod its claims
keep out (a PreFilter rejection) instead of failing.

The cluster: one node n1 with one device gpu0 (driver gpu.example.com, pool p1, attributes mem=5, model=A100), a
DeviceClass `gpu` with the selector under test, a ResourceClaim `c` asking for one device of it, and pod w-1 using
the claim.
"""
from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.cluster_models import parse_objects
from phalanx.cluster_models.dra import CelRuntimeError, cel_matches
from phalanx.sched import Cluster, Scheduler

try:
    from tests.strategies import make_node, make_pod
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod

runner = CliRunner()

NODE_AND_SLICE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: p1, resourceSliceCount: 1}
  devices:
  - name: gpu0
    attributes: {mem: {int: 5}, model: {string: A100}}
"""


def device_class(expression: str = 'device.driver == "gpu.example.com"', name: str = "gpu") -> str:
    return f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {name}}}
spec:
  selectors: [{{cel: {{expression: {json.dumps(expression)}}}}}]
"""


def claim(request: str = "g", device_class_name: str = "gpu") -> str:
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c}}
spec: {{devices: {{requests: [{{name: {request}, exactly: {{deviceClassName: {device_class_name}}}}}]}}}}
"""


def template(request: str = "g") -> str:
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: t}}
spec: {{spec: {{devices: {{requests: [{{name: {request}, exactly: {{deviceClassName: gpu}}}}]}}}}}}
"""


def pod(claim_entry: str = "{name: g, resourceClaimName: c}") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: w-1}}
spec:
  containers: [{{name: c, image: registry.k8s.io/pause:3.10}}]
  resourceClaims: [{claim_entry}]
"""


def write(tmp_path, *documents: str):
    (tmp_path / "cluster.yaml").write_text("---".join([NODE_AND_SLICE, *documents]))
    return str(tmp_path)


def assert_one_line_error(tmp_path, message: str) -> None:
    """schedule and explain (text and --json) both stop with exit 2 and exactly `error: <message>`."""
    for args in (["schedule", "-f", str(tmp_path)], ["explain", "-f", str(tmp_path), "--pod", "default/w-1"],
                 ["explain", "-f", str(tmp_path), "--pod", "default/w-1", "--json"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert res.stderr == f"error: {message}\n", args
        assert res.stdout == ""


# -- 1. CEL runtime errors: an input error naming the selector and the device, as upstream's allocator words it ----
@pytest.mark.parametrize("expression, detail", [
    ("device.attributes['gpu.example.com'].mem / 0 == 1", "division by zero"),
    ("device.attributes['gpu.example.com'].mem % 0 == 1", "modulo by zero"),
    ("device.attributes['gpu.example.com'].mem * 9223372036854775807 > 0",
     "Arithmetic overflow in 'mul' on 5 and 9223372036854775807"),
    ("[1, 2][device.attributes['gpu.example.com'].mem] == 1", "index out of bounds: 5"),
    ("int(device.attributes['gpu.example.com'].model) == 1",
     "Function 'int' error: string parse error: invalid digit found in string"),
])
def test_cel_runtime_error_is_one_line_naming_selector_and_device(tmp_path, expression, detail):
    write(tmp_path, device_class(expression), claim(), pod())
    assert_one_line_error(tmp_path, f'DeviceClass gpu: spec.selectors[0].cel.expression: CEL expression '
                                    f'"{expression}" on device gpu.example.com/p1/gpu0: CEL runtime error: {detail}')


def test_cel_runtime_error_in_a_claim_selector(tmp_path):
    request = ("{name: g, exactly: {deviceClassName: gpu, selectors: [{cel: {expression: "
               "\"device.attributes['gpu.example.com'].mem / 0 == 1\"}}]}}")
    doc = claim().replace("{name: g, exactly: {deviceClassName: gpu}}", request)
    write(tmp_path, device_class(), doc, pod())
    assert_one_line_error(tmp_path, "ResourceClaim default/c: spec.devices.requests[0].exactly.selectors[0].cel."
                                    "expression: CEL expression \"device.attributes['gpu.example.com'].mem / 0 == 1\" "
                                    "on device gpu.example.com/p1/gpu0: CEL runtime error: division by zero")


@pytest.mark.parametrize("error", [ZeroDivisionError("division by zero in CEL expression"),
                                   OverflowError("Arithmetic overflow in 'add' on 1 and 2."), IndexError("x"),
                                   RuntimeError("r"), TypeError("t"), ValueError("v"), ArithmeticError("a")])
def test_every_evaluation_error_is_a_cel_runtime_error(monkeypatch, error):
    import phalanx.cluster_models.dra as dra

    class Failing:
        def execute(self, context):
            raise error

    monkeypatch.setattr(dra, "cel_program", lambda expression: Failing())
    with pytest.raises(CelRuntimeError) as raised:
        cel_matches("true", [{"driver": "d", "attributes": {}, "capacity": {}}])
    assert raised.value.index == 0 and "\n" not in str(raised.value)


def test_a_missing_key_is_kept_as_that_devices_error():
    # Upstream's activation (cel.DeviceMatches): device.attributes["<domain>"] is an empty map for a domain the device
    # has nothing of, so the key missing is the attribute's name either way ("no such key: nope", cel-go's words);
    # has() of it is false, not an error.
    devices = [{"driver": "gpu.example.com", "attributes": {}, "capacity": {}},
               {"driver": "gpu.example.com", "attributes": {"gpu.example.com": {"other": 2}}, "capacity": {}},
               {"driver": "gpu.example.com", "attributes": {"gpu.example.com": {"nope": 1}}, "capacity": {}}]
    result = cel_matches("device.attributes['gpu.example.com'].nope == 1", devices)
    assert result.matched.tolist() == [False, False, True]
    assert result.missing == {0: "no such key: nope", 1: "no such key: nope"}
    guarded = cel_matches("has(device.attributes['gpu.example.com'].nope)", devices)
    assert guarded.matched.tolist() == [False, False, True] and guarded.missing == {}


# -- 2. explain renders a PreFilter rejection (a claim or template that does not exist) ----------------------------
# A PreFilter rejection leaves upstream's cycle state without the pod's claims: PostFilter has none to deallocate.
PREEMPTION = ("  preemption would not help: no new claims to deallocate, preemption: 0/1 nodes are available: 1 "
              "Preemption is not helpful for scheduling.")


@pytest.mark.parametrize("entry, reason", [
    ("{name: g, resourceClaimName: nope}", 'resourceclaim.resource.k8s.io "nope" not found'),
    ("{name: g, resourceClaimTemplateName: nope}", 'pod "default/w-1": ResourceClaim not created yet'),
])
def test_explain_text_of_a_pod_whose_claim_does_not_exist(tmp_path, entry, reason):
    write(tmp_path, device_class(), pod(entry))
    summary = runner.invoke(app, ["explain", "-f", str(tmp_path), "--pod", "default/w-1"])
    assert summary.exit_code == 0, summary.output
    assert summary.stdout.splitlines() == [
        f"pod default/w-1: 0/1 nodes are available: {reason}.",
        "  1 nodes rejected:",
        f"         1 DynamicResources: {reason}",
        "  (--all-nodes lists every node)",
        PREEMPTION]
    every = runner.invoke(app, ["explain", "-f", str(tmp_path), "--pod", "default/w-1", "--all-nodes"])
    assert every.exit_code == 0, every.output
    assert every.stdout.splitlines() == [
        f"pod default/w-1: 0/1 nodes are available: {reason}.",
        f"  n1: rejected by DynamicResources: {reason}",
        PREEMPTION]
    report = json.loads(runner.invoke(app, ["explain", "-f", str(tmp_path), "--pod", "default/w-1", "--json"]).stdout)
    assert report["nodes"] == [{"name": "n1", "scores": {}, "total": None, "first_failure": "DynamicResources",
                                "filters": {"DynamicResources": {"status": "UnschedulableAndUnresolvable",
                                                                 "reasons": [reason]}}}]


def test_explain_text_of_another_prefilter_rejection(tmp_path):
    # NodeAffinity's PreFilter: metadata.name terms that intersect to nothing (upstream "pod affinity terms conflict").
    conflict = """
apiVersion: v1
kind: Pod
metadata: {name: w-1}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [a]}, {key: metadata.name, operator: In, values: [b]}]
"""
    write(tmp_path, conflict)
    every = runner.invoke(app, ["explain", "-f", str(tmp_path), "--pod", "default/w-1", "--all-nodes"])
    assert every.exit_code == 0, every.output
    assert every.stdout.splitlines()[:2] == ["pod default/w-1: 0/1 nodes are available: pod affinity terms conflict.",
                                             "  n1: rejected by NodeAffinity: pod affinity terms conflict"]


def test_explain_text_of_a_cycle_that_fails_with_an_error(tmp_path):
    # DynamicResources' Filter without its PreFilter: upstream's "not found" reading the cycle state.
    write(tmp_path, device_class(), claim(), pod())
    config = tmp_path.parent / f"{tmp_path.name}-config.yaml"
    config.write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter:
      disabled: [{name: DynamicResources}]
""")
    head = ('pod default/w-1: running "DynamicResources" filter plugin: error reading "PreFilterDynamicResources" from '
            'cycleState: not found')
    args = ["explain", "-f", str(tmp_path), "--pod", "default/w-1", "--config", str(config)]
    summary = runner.invoke(app, args)
    assert summary.exit_code == 0, summary.output
    assert summary.stdout.splitlines() == [
        head, "  1 nodes: no verdict: the scheduling cycle failed with the error above", "  (--all-nodes lists every node)"]
    every = runner.invoke(app, [*args, "--all-nodes"])
    assert every.exit_code == 0, every.output
    assert every.stdout.splitlines() == [head, "  n1: no verdict: the scheduling cycle failed with the error above"]


# -- 3. a failing quantity() / semver(): one line, no warning line from the CEL library before it ------------------
FAILING_FUNCTIONS = [
    ("quantity('abc') == quantity('1')", 'CEL runtime error: quantity(): invalid quantity "abc"'),
    ("semver('x') == semver('1.0.0')", 'CEL runtime error: semver(): invalid semver "x"'),
    ("device.attributes['gpu.example.com'].mem.compareTo(semver('1.0.0')) > 0",
     'CEL runtime error: compareTo(): invalid semver "5"'),
]


def test_failing_library_function_logs_nothing(caplog):
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(CelRuntimeError):
            cel_matches("quantity('abc') == quantity('1')", [{"driver": "d", "attributes": {}, "capacity": {}}])
    assert [r.getMessage() for r in caplog.records if r.name.startswith("cel")] == []


# -- 4. names the API server rejects --------------------------------------------------------------------------------
SUBDOMAIN = ("must be a DNS subdomain: lowercase letters, digits, '-' and '.', each '.'-separated part starting and "
             "ending with a letter or digit")
LABEL = "must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"


def test_device_class_name_must_be_a_dns_subdomain(tmp_path):
    write(tmp_path, device_class(name="GPU_Class"), claim(device_class_name="GPU_Class"), pod())
    assert_one_line_error(tmp_path, f'DeviceClass GPU_Class: metadata.name: {SUBDOMAIN} (got "GPU_Class")')


def test_claim_request_name_must_be_a_dns_label(tmp_path):
    write(tmp_path, device_class(), claim(request="GPU_0"), pod())
    assert_one_line_error(tmp_path, f'ResourceClaim default/c: spec.devices.requests[0].name: {LABEL} (got "GPU_0")')


def test_template_request_name_must_be_a_dns_label(tmp_path):
    write(tmp_path, device_class(), template(request="GPU_0"), pod("{name: g, resourceClaimTemplateName: t}"))
    assert_one_line_error(tmp_path, f'ResourceClaimTemplate default/t: spec.spec.devices.requests[0].name: {LABEL} '
                                    f'(got "GPU_0")')


def test_claim_name_must_be_a_dns_subdomain(tmp_path):
    write(tmp_path, device_class(), claim().replace("{name: c}", "{name: C_1}"),
          pod("{name: g, resourceClaimName: C_1}"))
    assert_one_line_error(tmp_path, f'ResourceClaim default/C_1: metadata.name: {SUBDOMAIN} (got "C_1")')


# -- 5. type errors: the library has no type checker; evaluating the selector reports them, one line ---------------
@pytest.mark.parametrize("expression, detail", [
    *FAILING_FUNCTIONS,
    ("device.driver + 1", "CEL runtime error: Unsupported operation: string + int"),
    ("device.driver + 1 == 2", "CEL runtime error: Unsupported operation: string + int"),
    ("device.attributes['gpu.example.com'].mem < 'a'",
     "CEL runtime error: No such overload: the operation is not defined for the given operand types"),
    ("size(device.driver, 1) > 0", "CEL runtime error: Undefined variable or function: 'size'"),
])
def test_failing_functions_and_type_errors_are_one_line_when_evaluated(tmp_path, expression, detail):
    write(tmp_path, device_class(expression), claim(), pod())
    assert_one_line_error(tmp_path, f'DeviceClass gpu: spec.selectors[0].cel.expression: CEL expression '
                                    f'"{expression}" on device gpu.example.com/p1/gpu0: {detail}')


@pytest.mark.parametrize("expression, name", [("noSuchVar", "noSuchVar"), ("noSuchFn(device.driver)", "noSuchFn"),
                                              ("device.driver == other", "other")])
def test_undeclared_names_are_upstreams_compile_error(tmp_path, expression, name):
    # Upstream's compiler: "undeclared reference to 'x' (in container '')"; a known function with the wrong
    # arguments (size above) stays a runtime error.
    write(tmp_path, device_class(expression), claim(), pod())
    assert_one_line_error(tmp_path, f'DeviceClass gpu: spec.selectors[0].cel.expression: CEL expression '
                                    f'"{expression}": compilation failed: undeclared reference to \'{name}\' '
                                    f"(in container '')")


def test_non_bool_selector_is_one_line(tmp_path):
    write(tmp_path, device_class("device.driver"), claim(), pod())
    assert_one_line_error(tmp_path, "DeviceClass gpu: spec.selectors[0].cel.expression: CEL expression "
                                    "\"device.driver\": must evaluate to a bool (got 'gpu.example.com')")


def test_a_selector_over_10_kib_is_refused_before_it_is_compiled(tmp_path):
    # CELSelectorExpressionMaxLength; the library would crash on very long expressions (20,000 terms).
    long = " || ".join(['device.driver == "gpu.example.com"'] * 400)          # 14,396 characters
    write(tmp_path, device_class(long), claim(), pod())
    assert_one_line_error(tmp_path, "DeviceClass gpu: spec.selectors[0].cel.expression: Too long: may not be more "
                                    "than 10240 bytes")


@pytest.mark.parametrize("doc, message", [
    ("kind: ResourceClaim\napiVersion: resource.k8s.io/v1\nmetadata: {name: c, namespace: default}\n"
     "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, adminAccess: true}}]}}",
     "ResourceClaim default/c: spec.devices.requests[0].exactly.adminAccess: admin access is not modelled"),
    ("kind: ResourceClaim\napiVersion: resource.k8s.io/v1\nmetadata: {name: c, namespace: default}\n"
     "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 1Gi}}}}]}}",
     "ResourceClaim default/c: spec.devices.requests[0].exactly.capacity: consumable capacity is not modelled"),
    ("kind: ResourceSlice\napiVersion: resource.k8s.io/v1\nmetadata: {name: s}\nspec: {driver: d.example.com, "
     "pool: {name: n1, resourceSliceCount: 1}, nodeName: n1, devices: [{name: g, allowMultipleAllocations: true}]}",
     "ResourceSlice s: spec.devices[0].allowMultipleAllocations: consumable capacity (a device shared by several "
     "claims) is not modelled"),
])
def test_features_on_in_v136_that_phalanx_does_not_model_are_refused(doc, message):
    """Admin access (GA) and consumable capacity (beta) are on in v1.36: ignoring them would allocate what upstream
    does not, so they are input errors."""
    from phalanx.cluster_models import InputError, load_text

    with pytest.raises(InputError) as caught:
        load_text(doc)
    assert str(caught.value) == message


# -- 4. a selector failing on a device fails the attempt only where upstream's allocator evaluates it --------------
HEALTHY = 'device.attributes["gpu.example.com"].healthy'


def _walk_run(devices: list[dict], selectors=(HEALTHY,), cls: str = "gpu", taken: str | None = None):
    """Pod p with claim c (one device of class `cls`, `selectors`) on node a whose devices are `devices` in order;
    `taken`: a device another claim holds. (the bound node or None, p's devices, p's pending message)."""
    classes = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu-a100"},
                "spec": {"selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "A100"'}}]}}]
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "a-gpus"},
              "spec": {"driver": "gpu.example.com", "pool": {"name": "a", "resourceSliceCount": 1}, "nodeName": "a",
                       "devices": devices}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "g", "exactly": {
                 "deviceClassName": cls, "selectors": [{"cel": {"expression": e}} for e in selectors]}}]}}}
    docs = [*classes, slice_, claim]
    if taken is not None:
        docs.append({**claim, "metadata": {"name": "other", "namespace": "default"}, "spec": {"devices": {"requests": [
            {"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}, "status": {"allocation": {"devices": {"results": [
                {"request": "g", "driver": "gpu.example.com", "pool": "a", "device": taken}]}}}})
    objects = parse_objects(docs)
    objects.nodes = [make_node("a")]
    pod = make_pod("p")
    doc = pod.model_dump(by_alias=True, exclude_defaults=True)
    doc["spec"]["resourceClaims"] = [{"name": "c", "resourceClaimName": "c"}]
    objects.pods = [type(pod).model_validate(doc)]
    result = Scheduler(Cluster.from_objects(objects)).schedule()
    return (result.bindings.get("default/p"), [a["device"] for a in result.allocations.get("default/p", [])],
            result.unschedulable.get("default/p"))


SICK = {"name": "gpu0", "attributes": {"model": {"string": "B"}}}                  # no "healthy"
WELL = {"name": "gpu1", "attributes": {"model": {"string": "A100"}, "healthy": {"bool": True}}}
WALK_ERROR = ('running "DynamicResources" filter plugin: claim default/c: selector #0: CEL runtime error: no such key: '
              'healthy')


@pytest.mark.parametrize("devices, cls, taken, expect", [
    # Hand-checked against upstream's allocateOne / isSelectable. The walk reaches gpu0 first: the error.
    ([SICK, WELL], "gpu", None, (None, [], WALK_ERROR)),
    # gpu1 comes first and satisfies the request: the walk stops before gpu0.
    ([WELL, SICK], "gpu", None, ("a", ["gpu1"], None)),
    # gpu0 is in use: skipped before its selectors are evaluated.
    ([SICK, WELL], "gpu", "gpu0", ("a", ["gpu1"], None)),
    # The class's selector is false on gpu0 (model B): the request's is not evaluated there.
    ([SICK, WELL], "gpu-a100", None, ("a", ["gpu1"], None)),
])
def test_a_failing_selector_fails_the_attempt_where_the_walk_evaluates_it(devices, cls, taken, expect):
    assert _walk_run(devices, cls=cls, taken=taken) == expect


# -- found by fuzzing manifests: numbers beyond what the API decodes, or phalanx can hold, were tracebacks ----------


def test_a_request_count_beyond_int64_is_one_line(tmp_path):
    # It passed loading and overflowed numpy (OverflowError) in DynamicResources' PreFilter.
    write(tmp_path, device_class(), claim().replace("exactly: {deviceClassName: gpu}",
                                                    "exactly: {deviceClassName: gpu, count: 9223372036854775808}"),
          pod())
    assert_one_line_error(tmp_path, "ResourceClaim default/c: spec.devices.requests[0].exactly.count: input should be "
                                    "less than or equal to 9223372036854775807 (got 9223372036854775808)")


def test_a_device_capacity_beyond_int64_milli_units_is_one_line(tmp_path):
    # The capacity loaded and raised QuantityError when the allocator first read it in milli units.
    write(tmp_path, device_class(), claim(), pod())
    capacity = "model: {string: A100}}\n    capacity: {mem: {value: 1e400}}"
    text = (tmp_path / "cluster.yaml").read_text().replace("model: {string: A100}}", capacity)
    (tmp_path / "cluster.yaml").write_text(text)
    assert_one_line_error(tmp_path, 'ResourceSlice s1: spec.devices[0].capacity.mem.value: quantity "1e400" out of '
                                    "range")


# -- 5. ResourceSlice as v1.36's API server validates it (ValidateResourceSlice) ------------------------------------
# Expected messages written from upstream's pkg/apis/resource/validation/validation.go (field.ErrorList text, the
# first error in its order); DNS names, label keys and values in phalanx's words for those rules.
_SUBDOMAIN = ("must be a DNS subdomain: lowercase letters, digits, '-' and '.', each '.'-separated part starting and "
              "ending with a letter or digit")
_LABEL = "must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
_C_IDENTIFIER = ("a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
                 "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
                 "'[A-Za-z_][A-Za-z0-9_]*')")
_ONE_OF = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"


def _slice(devices: list | None = None, **spec) -> dict:
    """Slice s of driver d.example.com, pool p (one slice), on node n1; `spec` replaces (None: removes) fields."""
    fields = {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n1",
              "devices": [{"name": "gpu0"}] if devices is None else devices, **spec}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {k: v for k, v in fields.items() if v is not None}}


def _device(**fields) -> list:
    return [{"name": "gpu0", **fields}]


def _load_error(doc: dict) -> str | None:
    from phalanx.cluster_models import InputError
    try:
        parse_objects([doc])
    except InputError as error:
        return str(error)
    return None


@pytest.mark.parametrize("doc, message", [
    # validateDriverName (ValidateCSIDriverName): required, at most 63 bytes, a DNS subdomain once lowercased
    (_slice(driver=None), "spec.driver: Required value"),
    (_slice(driver="a" * 64), "spec.driver: Too long: may not be more than 63 bytes"),
    (_slice(driver="d_x.example.com"), f'spec.driver: {_SUBDOMAIN} (got "d_x.example.com")'),
    # validatePoolName: required, at most 253 bytes, each '/'-separated part a DNS subdomain
    (_slice(pool={"resourceSliceCount": 1}), "spec.pool.name: Required value"),
    (_slice(pool=None), "spec.pool.name: Required value"),
    (_slice(pool={"name": "a" * 254, "resourceSliceCount": 1}),
     "spec.pool.name: Too long: may not be more than 253 bytes"),
    (_slice(pool={"name": "a/B", "resourceSliceCount": 1}), f'spec.pool.name: {_SUBDOMAIN} (got "B")'),
    (_slice(pool={"name": "a//b", "resourceSliceCount": 1}), f'spec.pool.name: {_SUBDOMAIN} (got "")'),
    # validateResourcePool: resourceSliceCount (no default) before generation
    (_slice(pool={"name": "p"}), "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
    (_slice(pool={"name": "p", "resourceSliceCount": 1, "generation": -1}),
     "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero"),
    # node selection
    (_slice(nodeName=""), 'spec.nodeName: Invalid value: "": must be either unset or set to a non-empty string'),
    (_slice(nodeName=None), f"spec: Required value: {_ONE_OF}"),
    (_slice(allNodes=True), f'spec: Invalid value: "{{`nodeName`, `allNodes`}}": {_ONE_OF}, but multiple fields are '
                            f'set'),
    (_slice(allNodes=False), "spec.allNodes: Invalid value: false: must be either unset or set to true"),
    (_slice(perDeviceNodeSelection=False),
     "spec.perDeviceNodeSelection: Invalid value: false: must be either unset or set to true"),
    (_slice(_device(nodeName="n1"), nodeName=None, perDeviceNodeSelection=True),
     "spec.nodeName: phalanx models node-local devices only (nodeSelector, allNodes and perDeviceNodeSelection are not "
     "modelled)"),
    (_slice(sharedCounters=[{"name": "c", "counters": {"mem": {"value": "1"}}}]),
     'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'),
    # devices: at most 128, 64 when one has taints
    (_slice([{"name": f"d{i}"} for i in range(129)]), "spec.devices: Too many: 129: must have at most 128 items"),
    (_slice([{"name": f"d{i}", **({"taints": [{"key": "k", "effect": "None"}]} if i == 0 else {})}
             for i in range(65)]), "spec.devices: Too many: 65: must have at most 64 items"),
    (_slice([{"name": ""}]), f'spec.devices[0].name: {_LABEL} (got "")'),
    (_slice([{}]), f'spec.devices[0].name: {_LABEL} (got "")'),
    (_slice(_device(attributes={f"a{i}": {"int": i} for i in range(20)},
                    capacity={f"c{i}": {"value": "1"} for i in range(13)})),
     "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"),
    # attribute and capacity names (validateQualifiedName): errors name the map
    (_slice(_device(attributes={"1x": {"int": 1}})),
     f'spec.devices[0].attributes: Invalid value: "1x": {_C_IDENTIFIER}'),
    (_slice(_device(attributes={"a" * 33: {"int": 1}})),
     "spec.devices[0].attributes: Too long: may not be more than 32 bytes"),
    (_slice(_device(attributes={"/x": {"int": 1}})),
     'spec.devices[0].attributes: Invalid value: "": the domain must not be empty'),
    (_slice(_device(attributes={"d.example.com/": {"int": 1}})),
     'spec.devices[0].attributes: Invalid value: "": the name must not be empty'),
    (_slice(_device(attributes={"a" * 64 + "/x": {"int": 1}})),
     "spec.devices[0].attributes: Too long: may not be more than 63 bytes"),
    (_slice(_device(attributes={"d_x.com/x": {"int": 1}})),
     f'spec.devices[0].attributes: {_SUBDOMAIN} (got "d_x.com")'),
    (_slice(_device(capacity={"1mem": {"value": "1"}})),
     f'spec.devices[0].capacity: Invalid value: "1mem": {_C_IDENTIFIER}'),
    # attribute values (validateDeviceAttribute): errors name the key
    (_slice(_device(attributes={"x": {}})),
     'spec.devices[0].attributes[x]: Invalid value: "": exactly one value must be specified'),
    (_slice(_device(attributes={"x": {"int": 1, "string": "a"}})),
     'spec.devices[0].attributes[x]: Invalid value: {"int":1,"string":"a"}: exactly one value must be specified'),
    (_slice(_device(attributes={"x": {"string": "a" * 65}})),
     "spec.devices[0].attributes[x].string: Too long: may not be more than 64 bytes"),
    (_slice(_device(attributes={"x": {"string": "é" * 33}})),             # 66 bytes
     "spec.devices[0].attributes[x].string: Too long: may not be more than 64 bytes"),
    (_slice(_device(attributes={"x": {"version": "1.2"}})),
     'spec.devices[0].attributes[x].version: Invalid value: "1.2": must be a string compatible with semver.org spec '
     '2.0.0'),
    (_slice(_device(attributes={"x": {"version": "01.2.3"}})),
     'spec.devices[0].attributes[x].version: Invalid value: "01.2.3": must be a string compatible with semver.org '
     'spec 2.0.0'),
    (_slice(_device(attributes={"x": {"version": "1.2.3-" + "a" * 60}})),
     "spec.devices[0].attributes[x].version: Too long: may not be more than 64 bytes"),
    # capacity (validateSingleAllocatableDeviceCapacity)
    (_slice(_device(capacity={"mem": {"value": "1Gi", "requestPolicy": {"default": "1Gi"}}})),
     "spec.devices[0].capacity[mem].requestPolicy: Forbidden: allowMultipleAllocations must be true"),
    # taints (validateDeviceTaint): at most 16; key a label key, value a label value, effect required and supported
    (_slice(_device(taints=[{"key": f"k{i}", "effect": "None"} for i in range(17)])),
     "spec.devices[0].taints: Too many: 17: must have at most 16 items"),
    (_slice(_device(taints=[{"effect": "NoSchedule"}])),
     "spec.devices[0].taints[0].key: name part must be non-empty; name part must consist of alphanumeric characters, "
     "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
     "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') (got \"\")"),
    (_slice(_device(taints=[{"key": "k", "value": "a b", "effect": "NoSchedule"}])),
     "spec.devices[0].taints[0].value: a valid label must be an empty string or consist of alphanumeric characters, "
     "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
     "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') (got \"a b\")"),
    (_slice(_device(taints=[{"key": "k"}])), "spec.devices[0].taints[0].effect: Required value"),
    (_slice(_device(taints=[{"key": "k", "effect": "PreferNoSchedule"}])),
     'spec.devices[0].taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", '
     '"NoSchedule", "None"'),
    # per-device node selection without perDeviceNodeSelection
    (_slice(_device(nodeName="n1")),
     "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
     "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"),
    (_slice([{"name": "a"}, {"name": "b"}, {"name": "a"}]), 'spec.devices[2]: Duplicate value: "a"'),
])
def test_resource_slice_rules(doc, message):
    assert _load_error(doc) == f"ResourceSlice s: {message}"


@pytest.mark.parametrize("doc", [
    _slice(driver="GPU.Example.com"),                                       # lowercased before the DNS check
    _slice(pool={"name": "a.b/c-d", "resourceSliceCount": 1}),
    _slice(_device(attributes={"Example.COM/x": {"int": 1}, "a/b/c": {"bool": True},   # v1.36 accepts more slashes
                               "v": {"version": "1.2.3-rc.1+build.5"}, "s": {"string": "é" * 32}},
                   capacity={"d.example.com/mem": {"value": "80Gi"}},
                   taints=[{"key": "example.com/k", "value": "v", "effect": "NoExecute"}])),
    _slice([{"name": f"d{i}"} for i in range(128)]),
    _slice([], pool={"name": "p", "resourceSliceCount": 1, "generation": 0}),
])
def test_resource_slices_the_api_server_accepts(doc):
    assert _load_error(doc) is None


@pytest.mark.parametrize("doc, message", [
    # metadata before spec; driver before pool; resourceSliceCount before generation
    ({**_slice(driver=None), "metadata": {"name": "S"}}, f'metadata.name: {_SUBDOMAIN} (got "S")'),
    (_slice(driver="-", pool=None), f'spec.driver: {_SUBDOMAIN} (got "-")'),
    (_slice(pool={"name": "p", "generation": -1}),
     "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
    # upstream's node selection rules before phalanx's refusal of what it does not model
    (_slice(nodeName=None, allNodes=True, driver=""), "spec.driver: Required value"),
    (_slice(nodeSelector={"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                  "values": ["n1"]}]}]}),
     f'spec: Invalid value: "{{`nodeName`, `nodeSelector`}}": {_ONE_OF}, but multiple fields are set'),
    # the device count short-circuits the devices' own checks
    (_slice([{"name": "BAD"}] + [{"name": f"d{i}"} for i in range(128)]),
     "spec.devices: Too many: 129: must have at most 128 items"),
    # within a device: name, then the count of attributes and capacities, then attributes, capacity, taints
    (_slice([{"name": "BAD", "attributes": {f"a{i}": {"int": i} for i in range(33)}}]),
     f'spec.devices[0].name: {_LABEL} (got "BAD")'),
    (_slice(_device(attributes={"1x": {}}, capacity={"2y": {"value": "1"}}, taints=[{"key": "k"}])),
     f'spec.devices[0].attributes: Invalid value: "1x": {_C_IDENTIFIER}'),
    (_slice(_device(attributes={"x": {}}, capacity={"2y": {"value": "1"}})),
     'spec.devices[0].attributes[x]: Invalid value: "": exactly one value must be specified'),
    (_slice(_device(capacity={"2y": {"value": "1"}}, taints=[{"key": "k"}])),
     f'spec.devices[0].capacity: Invalid value: "2y": {_C_IDENTIFIER}'),
    # a value's own rule before the count of values set
    (_slice(_device(attributes={"x": {"int": 1, "string": "a" * 65}})),
     "spec.devices[0].attributes[x].string: Too long: may not be more than 64 bytes"),
    # every device is checked before duplicate names are
    (_slice([{"name": "a"}, {"name": "a"}, {"name": "b", "attributes": {"x": {}}}]),
     'spec.devices[2].attributes[x]: Invalid value: "": exactly one value must be specified'),
    # devices before shared counters; taints before the consumed counters phalanx refuses
    (_slice([{"name": "a", "taints": [{"key": "k"}], "consumesCounters": [{"counterSet": "c", "counters": {}}]}]),
     "spec.devices[0].taints[0].effect: Required value"),
])
def test_resource_slice_error_order(doc, message):
    assert _load_error(doc) == f"ResourceSlice {doc['metadata']['name']}: {message}"


_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_LABELS = st.builds(lambda first, rest: first + rest, st.sampled_from(_ALNUM),
                    st.one_of(st.just(""), st.builds(lambda middle, last: middle + last, st.text(_ALNUM + "-", max_size=8),
                                                     st.sampled_from(_ALNUM))))
_DOMAINS = st.lists(_LABELS, min_size=1, max_size=3).map(".".join)
_IDENTIFIERS = st.builds(lambda first, rest: first + rest, st.sampled_from("abcXYZ_"),
                         st.text("abcXYZ019_", max_size=31))
_QUALIFIED = st.one_of(_IDENTIFIERS, st.tuples(_DOMAINS, _IDENTIFIERS).map("/".join))
_VERSION_NUMBERS = st.integers(0, 10**6).map(str)
_SEMVERS = st.builds(lambda major, minor, patch, pre, build: f"{major}.{minor}.{patch}{pre}{build}",
                     _VERSION_NUMBERS, _VERSION_NUMBERS, _VERSION_NUMBERS,
                     st.sampled_from(["", "-rc.1", "-alpha", "-0.3.x-y", "-1a"]), st.sampled_from(["", "+b.5", "+001"]))
_VALUES = st.one_of(st.integers(-2**63, 2**63 - 1).map(lambda v: {"int": v}), st.booleans().map(lambda v: {"bool": v}),
                    st.text(max_size=16).map(lambda v: {"string": v}), _SEMVERS.map(lambda v: {"version": v}))
_TAINTS = st.fixed_dictionaries({"key": st.one_of(_LABELS, st.tuples(_DOMAINS, _LABELS).map("/".join)),
                                 "effect": st.sampled_from(["NoSchedule", "NoExecute", "None"])},
                                optional={"value": _LABELS})


@st.composite
def _valid_slices(draw) -> dict:
    """Slices within every rule of ValidateResourceSlice (and of what phalanx models)."""
    names = draw(st.lists(_LABELS, unique=True, max_size=4))
    devices = []
    for name in names:
        attributes = draw(st.dictionaries(_QUALIFIED, _VALUES, max_size=4))
        capacity = draw(st.dictionaries(_QUALIFIED, st.integers(0, 10**6).map(lambda v: {"value": str(v)}),
                                        max_size=3))
        devices.append({"name": name, "attributes": attributes, "capacity": capacity,
                        "taints": draw(st.lists(_TAINTS, max_size=3))})
    driver = draw(_DOMAINS.filter(lambda d: len(d) <= 63))
    if draw(st.booleans()):
        driver = driver.upper()
    pool = "/".join(draw(st.lists(_DOMAINS, min_size=1, max_size=3)))
    return _slice(devices, driver=driver, pool={"name": pool, "resourceSliceCount": draw(st.integers(1, 2**63 - 1)),
                                                "generation": draw(st.integers(0, 2**63 - 1))},
                  nodeName=draw(_DOMAINS.filter(lambda d: len(d) <= 253)))


@settings(max_examples=100, deadline=None)
@given(_valid_slices())
def test_valid_generated_slices_are_accepted(doc):
    assert _load_error(doc) is None


def _claim(requests: list) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": requests}}}


def _exact(name: str, **fields) -> dict:
    return {"name": name, "exactly": {"deviceClassName": "gpu", **fields}}


@pytest.mark.parametrize("doc, message", [
    # validateDeviceClaim: validateSet of the requests (at most 32, checked first; duplicates after every request)
    (_claim([_exact(f"r{i}") for i in range(33)]), "spec.devices.requests: Too many: 33: must have at most 32 items"),
    (_claim([_exact("a"), _exact("a")]), 'spec.devices.requests[1]: Duplicate value: "a"'),
    (_claim([_exact("a"), _exact("a"), {"name": "b"}]),
     "spec.devices.requests[2]: Required value: exactly one of `exactly` or `firstAvailable` is required"),
    (_claim([{"name": "a", "firstAvailable": [{"name": "x", "deviceClassName": "gpu"},
                                              {"name": "x", "deviceClassName": "gpu"}]}]),
     'spec.devices.requests[0].firstAvailable[1]: Duplicate value: "x"'),
])
def test_claim_request_set_rules(doc, message):
    assert _load_error(doc) == f"ResourceClaim default/c: {message}"


def test_at_most_32_selectors_counted_before_any_is_compiled():
    # validateSelectorSlice: the count short-circuits (the 33rd selector does not even parse).
    selectors = [{"cel": {"expression": "true"}}] * 32 + [{"cel": {"expression": "device.driver =="}}]
    device_class_doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                        "spec": {"selectors": selectors}}
    assert _load_error(device_class_doc) == "DeviceClass gpu: spec.selectors: Too many: 33: must have at most 32 items"
    assert _load_error(_claim([_exact("r", selectors=selectors)])) == (
        "ResourceClaim default/c: spec.devices.requests[0].exactly.selectors: Too many: 33: must have at most 32 items")
    assert _load_error({**device_class_doc, "spec": {"selectors": selectors[:32]}}) is None
