"""ImageLocality: Score by the sizes of the pod's images the node already holds, scaled by how widely each is
spread. Upstream: plugins/imagelocality/image_locality.go (calculatePriority)."""
from __future__ import annotations

from .backend import score_div
from .status import MAX_NODE_SCORE

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB              # image sizes summed below this score 0
MAX_CONTAINER_THRESHOLD = 1000 * MB  # per container: sums above containers x this score MAX_NODE_SCORE


def image_locality_score(xp, summed, containers: int):
    """summed: (N,) int64 each node's sum of the scaled sizes of the pod's images it holds (one term per container
    and init container naming a held image); containers: the pod's containers and init containers. Raw score
    MAX_NODE_SCORE x (sum - min) / (max - min), the sum clamped to [min, max], max = containers x 1000 MiB."""
    top = MAX_CONTAINER_THRESHOLD * containers
    clamped = xp.minimum(xp.maximum(summed, MIN_THRESHOLD), top)
    return score_div(xp, MAX_NODE_SCORE * (clamped - MIN_THRESHOLD), xp.full(summed.shape, top - MIN_THRESHOLD,
                                                                             dtype=xp.int64))
