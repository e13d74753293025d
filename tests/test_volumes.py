"""Storage objects and the volume plugins (VolumeRestrictions, VolumeZone, VolumeBinding), v1.36.0.

Toy clusters, decisions and messages worked out by hand from upstream's code (the comments say why): nodes are
4 cpu / 8Gi, pods 1 cpu / 1Gi; between equally good nodes the first one (input order) wins, and with
LeastAllocated an emptier node scores higher.
"""
from __future__ import annotations

import pytest
import yaml

from phalanx.cluster_models import InputError, load_text


# -- the models: API-server validation of what phalanx reads -------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
     "spec: {accessModes: [RWX], resources: {requests: {storage: 1Gi}}}",
     'PersistentVolumeClaim default/c: spec.accessModes: Unsupported value: "RWX": supported values: "ReadOnlyMany", '
     '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'),
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce]}",
     "PersistentVolumeClaim default/c: spec.resources[storage]: Required value"),
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
     "spec: {resources: {requests: {storage: 1Gi}}}",
     "PersistentVolumeClaim default/c: spec.accessModes: Required value: at least 1 access mode is required"),
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
     "spec: {accessModes: [ReadWriteOncePod, ReadWriteOnce], resources: {requests: {storage: 1Gi}}}",
     "PersistentVolumeClaim default/c: spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access "
     "modes"),
    ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\n"
     "spec: {accessModes: [ReadWriteOnce], capacity: {storage: 0}}",
     'PersistentVolume v: spec.capacity[storage]: Invalid value: "0": must be greater than zero'),
    ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {accessModes: [ReadWriteOnce]}",
     "PersistentVolume v: spec.capacity: Required value"),
    ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\n"
     "spec: {accessModes: [ReadWriteOnce], capacity: {storage: 1Gi}, nodeAffinity: {required: {nodeSelectorTerms: []}}}",
     "PersistentVolume v: spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node "
     "selector term"),
    ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\n",
     "StorageClass s: provisioner: Required value"),
    ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\n"
     "volumeBindingMode: Later",
     'StorageClass s: volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
     '"WaitForFirstConsumer"'),
    ("apiVersion: storage.k8s.io/v1beta1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\n",
     'StorageClass s: apiVersion: unknown version "storage.k8s.io/v1beta1" of StorageClass (served: '
     'storage.k8s.io/v1)'),
])
def test_storage_objects_are_validated_as_the_api_server_does(text, message):
    with pytest.raises(InputError) as error:
        load_text(text)
    assert str(error.value) == message


def test_storage_objects_load_with_api_defaults():
    objects = load_text("""
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1, annotations: {volume.beta.kubernetes.io/storage-class: beta}}
spec: {capacity: {storage: 1536Mi}, accessModes: [ReadWriteOnce], storageClassName: ga}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c1, namespace: ml}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1.5Gi}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: std}
provisioner: example.com/csi
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n0}
spec: {drivers: [{name: example.com/csi, nodeID: n0, allocatable: {count: 3}}]}
""")
    pv, = objects.persistent_volumes
    claim, = objects.persistent_volume_claims
    sc, = objects.storage_classes
    assert pv.capacity == 1536 * 2**20 and pv.storage_class == "beta"      # the beta annotation first
    assert pv.status.phase == "Available" and pv.spec.volume_mode == "Filesystem"
    assert claim.key == "ml/c1" and claim.request == claim.request.numerator == 1536 * 2**20
    assert claim.storage_class == "" and not claim.fully_bound
    assert sc.volume_binding_mode == "Immediate"                              # the API server's default
    assert objects.csi_nodes[0].spec.drivers[0].allocatable.count == 3
    assert not objects.warnings
