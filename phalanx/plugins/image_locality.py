"""ImageLocality: Score favouring nodes that already hold the pod's container images, each image's size scaled by the
share of the cluster's nodes holding it (so one node holding a large image does not draw every pod). Not normalized.
Upstream: plugins/imagelocality/image_locality.go; the image summaries are the scheduler cache's
(cluster_models/images.py).

It has no PreScore upstream: the per-node sums are made on the host when the Score state is, once per pod shape
(they depend on the nodes alone, so they hold while pods come and go)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.image_locality import image_locality_score
from .framework import FIXED, SKIP, Pads, Plugin, pad1


def normalized_image_name(name: str) -> str:
    """The name as a CRI runtime reports it: ":latest" added when the name has no tag (no ':' after its last '/')."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


@dataclass(frozen=True)
class ImageSums:
    summed: np.ndarray          # (N,) int64 each node's scaled sizes of the pod's images it holds
    containers: int             # the pod's init containers and containers


class ImageLocality(Plugin):
    name = "ImageLocality"
    reads_requests = False
    events = frozenset()        # a Score plugin: it rejects no pod

    def score_state(self, pod, cluster, pre):
        spec = pod.pod.spec
        containers = [*spec.init_containers, *spec.containers]
        # v1.36 (#130231) also sums the images of `image` volumes (ImageVolume), while the threshold still counts
        # containers only (upstream issue #138952, changed after v1.36).
        names = [c.image for c in containers] + [v["image"].get("reference") or "" for v in spec.volumes
                                                 if isinstance(v.get("image"), dict)]
        images = cluster.images
        summed = None
        for name in names:
            held = images.scaled(normalized_image_name(name))
            if held is not None:
                if summed is None:
                    summed = np.zeros(images.total, np.int64)
                nodes, score = held
                summed[nodes] += score
        return SKIP if summed is None else ImageSums(summed, len(containers))   # SKIP: no node holds one (all 0)

    def removal_behaviour(self, state):
        return FIXED         # reads the nodes' images, not their pods

    def score(self, xp, state, tensors, feasible, cache=None):
        return image_locality_score(xp, xp.asarray(state.summed), state.containers)

    def pad_score_state(self, state, pads: Pads):
        return ImageSums(pad1(state.summed, pads.nodes, 0), state.containers)
