"""Constraints phalanx does not model yet are reported, never silently dropped."""
from __future__ import annotations

import pytest

from phalanx.cluster_models import load_text
from phalanx.sched import Cluster, Scheduler

MANIFESTS = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ml}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: x}}
        topologyKey: kubernetes.io/hostname
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: ml}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}, {name: cfg, configMap: {name: cfg}}]
---
apiVersion: v1
kind: Pod
metadata: {name: c, namespace: ml}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  schedulingGroup: {podGroupName: train}
---
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: ml}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  schedulingGates: [{name: example.com/wait}]
"""


def test_unmodelled_constraints_warn_and_gates_block():
    result = Scheduler(Cluster.from_objects(load_text(MANIFESTS))).schedule()
    # ml/b's claim is not evaluated: the input describes no storage at all (docs/semantics.md "Volumes").
    assert result.bindings == {"ml/a": "n0", "ml/b": "n0"}
    assert result.unschedulable == {
        "ml/gated": "Scheduling is blocked due to non-empty scheduling gates",
        "ml/c": 'waiting for pods\'s pod group "train" to appear in scheduling queue'}
    text = "\n".join(result.warnings)
    assert "InterPodAffinity" not in text            # modelled: ml/a's anti-affinity is honoured, not warned about
    assert ("Pod ml/b: volumes persistentVolumeClaim (the input describes no storage: no PersistentVolume, "
            "PersistentVolumeClaim or StorageClass; ignored)") in text
    assert text.count("persistentVolumeClaim (") == 1      # the three volume plugins' one warning, once
    assert "configMap" not in text


def test_no_nodes():
    result = Scheduler(Cluster.from_objects(load_text(MANIFESTS.split("---", 1)[1]))).schedule()
    assert result.unschedulable["ml/a"] == "no nodes available to schedule pods"


def test_ignored_extended_resources_are_not_checked():
    from phalanx.sched.config import profile_from_config
    manifests = MANIFESTS.split("---")[0] + """---
apiVersion: v1
kind: Pod
metadata: {name: fpga}
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: 100m, example.com/fpga: "1", vendor.io/card: "2"},
                limits: {example.com/fpga: "1", vendor.io/card: "2"}}
"""
    blocked = Scheduler(Cluster.from_objects(load_text(manifests))).schedule()
    assert blocked.unschedulable["default/fpga"] == (
        "0/1 nodes are available: 1 Insufficient example.com/fpga, 1 Insufficient vendor.io/card. no new claims to"
        " deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    profile = profile_from_config({"kind": "KubeSchedulerConfiguration", "profiles": [{"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/fpga"],
                                              "ignoredResourceGroups": ["vendor.io"]}}]}]})
    admitted = Scheduler(Cluster.from_objects(load_text(manifests)), profile).schedule()
    assert admitted.bindings == {"default/fpga": "n0"}


def test_unparsable_preferred_term_fails_prescore_only_with_a_choice():
    # Upstream NewPreferredSchedulingTerms fails on Gt ["abc"]; PreScore (run only with > 1 feasible node)
    # then fails the cycle. With one feasible node scoring is skipped and the pod binds.
    node = MANIFESTS.split("---")[0]
    pod = """---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        preference: {matchExpressions: [{key: gen, operator: Gt, values: [abc]}]}
"""
    one = Scheduler(Cluster.from_objects(load_text(node + pod))).schedule()
    assert one.bindings == {"default/p": "n0"}
    two = Scheduler(Cluster.from_objects(load_text(node + "---" + node.replace("n0", "n1") + pod))).schedule()
    assert two.unschedulable["default/p"].startswith('running PreScore plugin "NodeAffinity": ')


@pytest.mark.parametrize("expressions,message", [
    ('[{key: gen, operator: Gt, values: [abc]}]',
     "[0].matchExpressions[0].values[0]: Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an "
     "integer"),
    # API validation leaves preferred terms' values alone; labels.NewRequirement checks them as label values
    ('[{key: zone, operator: In, values: [ok, "a b"]}]',
     "[0].matchExpressions[0].values[1][zone]: Invalid value: \"a b\": a valid label must be an empty string or consist of "
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    # Gt "-1" parses as an integer but is no label value; two bad requirements aggregate as [e1, e2]. A label-value
    # error's path names the key (validateLabelValue: path.Key(k)); the integer error's does not
    ('[{key: gen, operator: Gt, values: ["-1"]}, {key: gen, operator: Lt, values: [x]}]',
     "[[0].matchExpressions[0].values[0][gen]: Invalid value: \"-1\": a valid label must be an empty string or consist of "
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), [0].matchExpressions[1].values[0]: Invalid value: \"x\": "
     "for 'Gt', 'Lt' operators, the value must be an integer]"),
])
def test_unparsable_preferred_term_message(expressions, message):
    """NewPreferredSchedulingTerms' aggregated field errors (no path prefix: the plugin passes none), after
    the framework's `running PreScore plugin "NodeAffinity": `."""
    node = MANIFESTS.split("---")[0]
    pod = f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers: [{{name: c, image: registry.k8s.io/pause:3.10}}]
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        preference: {{matchExpressions: {expressions}}}
"""
    two = Scheduler(Cluster.from_objects(load_text(node + "---" + node.replace("n0", "n1") + pod))).schedule()
    assert two.unschedulable["default/p"] == 'running PreScore plugin "NodeAffinity": ' + message
