"""Regressions for the defects an outside fuzz of the simulation API found (issue 17), each failing before its fix."""
from __future__ import annotations

import pytest
from strategies import make_node, make_pod, make_pod_group

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.podgroups import MEMBER_UNSCHEDULABLE, QUORUM_MESSAGE


def _one_node(**kw) -> Scheduler:
    return Scheduler(Cluster.from_objects(ClusterObjects(nodes=[make_node("n0", cpu="4", memory="8Gi")], **kw)))


@pytest.mark.parametrize("second", ["200m", "100m"], ids=["other-spec", "same-spec"])
def test_a_name_deleted_twice_is_never_bound(second):
    """Two lives of one name, each deleted while pending: the first stale queue entry must not consume the second
    deletion (it used to bind a pod that no longer exists, or raise KeyError)."""
    s = _one_node()
    s.add_pods([make_pod("p0", cpu="100m")])
    s.delete_pod("default/p0")
    s.add_pods([make_pod("p0", cpu=second)])
    s.delete_pod("default/p0")
    assert s.run_until_idle() == []
    assert s.cluster.tensors.nodes.requested.sum() == 0


def test_a_name_deleted_then_added_again_binds_once():
    s = _one_node()
    s.add_pods([make_pod("p0", cpu="100m")])
    s.delete_pod("default/p0")
    s.add_pods([make_pod("p0", cpu="300m")])
    records = s.run_until_idle()
    assert [(r.kind, r.object, r.node) for r in records] == [("Bound", "default/p0", "n0")]
    assert s.cluster.tensors.nodes.requested[0, s.cluster.tensors.resources.ids["cpu"]] == 300


def test_gang_that_loses_a_member_while_queued_goes_back_to_preenqueue():
    """v1.36: nothing re-checks a queued gang; its cycle fails (Permit never reaches minCount), and the requeue runs
    PreEnqueue, which holds the members until a new member arrives."""
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(2)]
    s = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pod_groups=[make_pod_group("g", min_count=3)])))
    s.add_pods([make_pod(f"m{i}", cpu="1", pod_group="g") for i in range(3)])
    s.delete_pod("default/m2")
    out = s.step(0.0)
    messages = [(r.object, r.message) for r in out if r.kind == "Unschedulable"]
    # No pod is bound, so workload-aware preemption has no victim and says so in the group's status.
    failed = MEMBER_UNSCHEDULABLE + ", No preemption victims found for incoming preemptor"
    assert messages == [("default/m0", failed), ("default/m1", failed),
                        ("default/m0", QUORUM_MESSAGE), ("default/m1", QUORUM_MESSAGE)]
    assert s.step(60.0) == []                       # held: no retry without a new member
    s.add_pods([make_pod("m3", cpu="1", pod_group="g")])
    bound = {r.object for r in s.run_until_idle() if r.kind == "Bound"}
    assert bound == {"default/m0", "default/m1", "default/m3"}


@pytest.mark.parametrize("where", ["unschedulable pool", "gated", "gang member"])
def test_deleting_a_pod_outside_the_pod_runs_leaves_no_deletion_marker(where):
    """Found by the soak test (tests/test_soak.py): a deletion marker was left for every pending pod deleted
    from the unschedulable pool, the gated pool or its PodGroup; nothing ever consumed them, so they grew with
    the events of a long simulation."""
    s = _one_node(pod_groups=[make_pod_group("g", min_count=3)])
    if where == "unschedulable pool":
        s.add_pods([make_pod("p0", cpu="64")])
        s.run_until_idle()
    elif where == "gated":
        s.add_pods([make_pod("p0", cpu="100m", scheduling_gates=["wait"])])
    else:
        s.add_pods([make_pod("p0", cpu="100m", pod_group="g")])      # waits for quorum
    s.delete_pod("default/p0")
    assert s.queue.deleted == set()
    assert s.run_until_idle() == []


# ---- a KubeSchedulerConfiguration decoded strictly (a fuzz of the config loader) ----

def _config_error(text: str) -> str:
    import yaml

    from phalanx.cluster_models import InputError
    from phalanx.sched.config import config_from_doc
    with pytest.raises(InputError) as caught:
        config_from_doc(yaml.safe_load("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                                       + text))
    return str(caught.value)


def _plugin_args(name: str, args: str) -> str:
    return f"profiles:\n- pluginConfig:\n  - name: {name}\n    args: {args}\n"


@pytest.mark.parametrize("name,args,field,problem", [
    # Go's json decoder takes no string, bool or fraction for an int32 field (it was coerced: "5" -> 5, true -> 1)
    ("InterPodAffinity", "{hardPodAffinityWeight: '5'}", "hardPodAffinityWeight",
     'input should be a valid integer (got "5")'),
    ("InterPodAffinity", "{hardPodAffinityWeight: true}", "hardPodAffinityWeight",
     "input should be a valid integer (got true)"),
    ("InterPodAffinity", "{ignorePreferredTermsOfExistingPods: 'true'}", "ignorePreferredTermsOfExistingPods",
     'input should be a valid boolean (got "true")'),
    ("NodeResourcesFit", "{scoringStrategy: {resources: [{name: cpu, weight: '1'}]}}",
     "scoringStrategy.resources[0].weight", 'input should be a valid integer (got "1")'),
    # *int32 / int32 / *int64 fields (types_pluginargs.go, v1.TopologySpreadConstraint) out of their Go range
    ("DefaultPreemption", "{minCandidateNodesAbsolute: 99999999999}", "minCandidateNodesAbsolute",
     "input should be less than or equal to 2147483647 (got 99999999999)"),
    ("PodTopologySpread",
     "{defaultingType: List, defaultConstraints: [{maxSkew: 4294967297, topologyKey: k, "
     "whenUnsatisfiable: ScheduleAnyway}]}",
     "defaultConstraints[0].maxSkew", "input should be less than or equal to 2147483647 (got 4294967297)"),
    ("VolumeBinding", "{bindTimeoutSeconds: 18446744073709551617}", "bindTimeoutSeconds",
     "input should be less than or equal to 9223372036854775807 (got 18446744073709551617)"),
])
def test_plugin_args_are_decoded_strictly(name, args, field, problem):
    assert _config_error(_plugin_args(name, args)) == (
        f"scheduler config: profiles[0].pluginConfig[0].args.{field}: {problem}")


@pytest.mark.parametrize("text,message", [
    # v1.Extender: HTTPTimeout is a metav1.Duration (time.ParseDuration's error), the verbs strings, the flags bools
    ("extenders: [{urlPrefix: http://x, httpTimeout: 12x}]",
     'extenders[0].httpTimeout: time: unknown unit "x" in duration "12x"'),
    ("extenders: [{urlPrefix: [http://x]}]", "extenders[0].urlPrefix: expected a string, got ['http://x']"),
    ("extenders: [{urlPrefix: x, enableHTTPS: 'true'}]", "extenders[0].enableHTTPS: expected true or false, got 'true'"),
    ("extenders: [{urlPrefix: x, tlsConfig: {insecure: 1}}]",
     "extenders[0].tlsConfig.insecure: expected true or false, got 1"),
    ("extenders: [{urlPrefix: x, tlsConfig: {caFiles: a}}]",
     "extenders[0].tlsConfig.caFiles: unknown field (strict decoding error)"),
    # ExtenderTLSConfig's CertData / KeyData / CAData are []byte: base64 strings (base64.StdEncoding's errors)
    ("extenders: [{urlPrefix: x, tlsConfig: {certData: 'not base64!!'}}]",
     "extenders[0].tlsConfig.certData: illegal base64 data at input byte 3"),
    ("extenders: [{urlPrefix: x, tlsConfig: {keyData: 'YQ='}}]",
     "extenders[0].tlsConfig.keyData: illegal base64 data at input byte 3"),
    ("extenders: [{urlPrefix: x, tlsConfig: {caData: 'Y===', certData: 'YQ=='}}]",
     "extenders[0].tlsConfig.caData: illegal base64 data at input byte 1"),
    ("extenders: [{urlPrefix: x, tlsConfig: {caData: 5}}]", "extenders[0].tlsConfig.caData: expected a string, got 5"),
    ("extenders: [{urlPrefix: x, managedResources: [{name: example.com/a, ignoredByScheduler: 'yes'}]}]",
     "extenders[0].managedResources[0].ignoredByScheduler: expected true or false, got 'yes'"),
    # componentbaseconfig's LeaderElectionConfiguration and ClientConnectionConfiguration: strict, then validated
    ("leaderElection: {leaderElect: 'false'}", "leaderElection.leaderElect: expected true or false, got 'false'"),
    ("leaderElection: {leaseDurations: 15s}", "leaderElection.leaseDurations: unknown field (strict decoding error)"),
    ("leaderElection: {retryPeriod: 2x}", 'leaderElection.retryPeriod: time: unknown unit "x" in duration "2x"'),
    ("clientConnection: {qps: fast}", "clientConnection.qps: expected a number, got 'fast'"),
    ("enableProfiling: 'yes'", "enableProfiling: expected true or false, got 'yes'"),
    # ValidateLeaderElectionConfiguration on the defaults (15s, 10s, 2s) and ValidateClientConnectionConfiguration
    ("leaderElection: {leaseDuration: 10s}",
     "leaderElection.leaseDuration: Invalid value: 10s: must be greater than `RenewDeadline`"),
    ("leaderElection: {retryPeriod: -3ms}", "leaderElection.retryPeriod: Invalid value: -3ms: must be greater than zero"),
    ("clientConnection: {burst: -1}", "clientConnection.burst: Invalid value: -1: must be non-negative"),
])
def test_config_structs_phalanx_does_not_read_are_decoded_and_validated(text, message):
    assert _config_error(text) == f"scheduler config: {message}"


def test_leader_election_off_or_defaulted_is_not_validated():
    import yaml

    from phalanx.sched.config import config_from_doc
    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    for text in ("leaderElection: {leaderElect: false, leaseDuration: -1s}",
                 "leaderElection: {resourceLock: '', leaseDuration: 0s}", "clientConnection: {qps: 50, burst: 100}"):
        config_from_doc(yaml.safe_load(head + text))


# ---- DRA names the API server refuses (a fuzz of the manifest loader) ----

_SUBDOMAIN = ("must be a DNS subdomain: lowercase letters, digits, '-' and '.', each '.'-separated part starting and "
              "ending with a letter or digit")
_LABEL = "must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n  resourceClaims: "
_SLICE = ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.example.com\n"
          "  pool: {name: p, resourceSliceCount: 1}\n")
_CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n    requests: "


@pytest.mark.parametrize("text,message", [
    # validatePodResourceClaims: names DNS labels and unique; ValidateResourceClaimName /
    # ValidateResourceClaimTemplateName: DNS subdomains (a template's pod also names a DaemonSet's, Job's, ... pods)
    (_POD + "[{name: a, resourceClaimName: x}, {name: a, resourceClaimName: y}]",
     'Pod default/p: spec.resourceClaims[1].name: Duplicate value: "a"'),
    (_POD + "[{name: GPU, resourceClaimName: x}]", f'Pod default/p: spec.resourceClaims[0].name: {_LABEL} (got "GPU")'),
    (_POD + "[{name: a, resourceClaimName: '*'}]",
     f'Pod default/p: spec.resourceClaims[0].resourceClaimName: {_SUBDOMAIN} (got "*")'),
    (_POD + "[{name: a, resourceClaimTemplateName: A_B}]",
     f'Pod default/p: spec.resourceClaims[0].resourceClaimTemplateName: {_SUBDOMAIN} (got "A_B")'),
    # validateDeviceClass (ValidateClassName): a request's and a subrequest's deviceClassName
    (_CLAIM + "[{name: r, exactly: {deviceClassName: GPU.example.com}}]",
     "ResourceClaim default/c: spec.devices.requests[0].exactly.deviceClassName: "
     f'{_SUBDOMAIN} (got "GPU.example.com")'),
    (_CLAIM + "[{name: r, firstAvailable: [{name: a, deviceClassName: ' gpu'}]}]",
     "ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].deviceClassName: "
     f'{_SUBDOMAIN} (got " gpu")'),
    # ResourceSlice: ValidateNodeName, validateDevice's name, validateSet's duplicate keys (named by the item's index)
    (_SLICE + "  nodeName: ' n1'\n  devices: [{name: a}]\n",
     f'ResourceSlice s: spec.nodeName: {_SUBDOMAIN} (got " n1")'),
    (_SLICE + "  nodeName: n1\n  devices: [{name: gpu_0}]\n",
     f'ResourceSlice s: spec.devices[0].name: {_LABEL} (got "gpu_0")'),
    (_SLICE + "  nodeName: n1\n  devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-0}]\n",
     'ResourceSlice s: spec.devices[2]: Duplicate value: "gpu-0"'),
])
def test_dra_names_are_validated(text, message):
    from phalanx.cluster_models import InputError, load_text
    with pytest.raises(InputError) as caught:
        load_text(text)
    assert str(caught.value) == message


@pytest.mark.parametrize("parameters, error", [
    (1.5, 'DeviceClass gpu: spec.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON '
          'object'),
    ({"mode": 1.5, "count": 2.0}, None),
], ids=["a-number", "numbers-inside"])
def test_opaque_parameters_holding_non_integer_numbers_are_measured(parameters, error):
    """A mutation fuzz of DRA manifests: opaque parameters with a number that is not an integer (read exactly, as a
    Decimal) raised a TypeError while their JSON length was measured, instead of the object check's error or
    acceptance."""
    import json

    from phalanx.cluster_models import InputError
    from phalanx.cluster_models.load import load_text
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"config": [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]}}
    text = json.dumps(doc)
    if error is None:
        assert [c.metadata.name for c in load_text(text, "dc.json").device_classes] == ["gpu"]
    else:
        with pytest.raises(InputError) as raised:
            load_text(text, "dc.json")
        assert str(raised.value) == error


def test_a_csinode_count_beyond_int32_is_refused():
    """A mutation fuzz of storage manifests: a CSINode driver's allocatable count of 2^63 (the API's *int32) raised
    OverflowError when NodeVolumeLimits laid the limits out, instead of the decoding error."""
    import json

    from phalanx.cluster_models import InputError
    from phalanx.cluster_models.load import load_text
    doc = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
           "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1", "allocatable": {"count": 2**63}}]}}
    with pytest.raises(InputError) as raised:
        load_text(json.dumps(doc), "csinode.json")
    assert str(raised.value) == ("CSINode n1: spec.drivers[0].allocatable.count: input should be less than or equal "
                                 "to 2147483647 (got 9223372036854775808)")
