"""TopologyPlacementGenerator (KEP-5732, TopologyAwareWorkloadScheduling): a PodGroup with
schedulingConstraints.topology is placed inside one domain of its node label; every label value is a candidate
placement (nodes without the label are in none). Upstream: pkg/scheduler/framework/plugins/topologyaware.

With members already scheduled, only their domain is a candidate; members on nodes not in the node table, on
unlabelled nodes or in two domains are an error (v1.36 wording)."""
from __future__ import annotations

import numpy as np

from ..cluster_models.objects import go_quote
from ..kernels import topology_placement as kernel
from .framework import CycleError, Plugin

NO_PLACEMENTS_MESSAGE = "no feasible placements found"


class TopologyPlacementGenerator(Plugin):
    name = "TopologyPlacementGenerator"

    def generate_placements(self, group, tensors, bound_nodes: list[tuple[str, str]]):
        """Node ids of each placement, in order of their first node (upstream: Go map order); None when the
        group has no topology constraint (the whole cluster is its one placement); a CycleError when the
        members already scheduled fix no single domain. bound_nodes: (pod key, node name) of those members."""
        keys = group.spec.topology_keys
        if not keys:
            return None
        domain = np.asarray(kernel.domains(np, tensors.nodes.labels, tensors.node_labels.keys.get(keys[0])))
        labelled = np.flatnonzero(domain >= 0)
        values, first = np.unique(domain[labelled], return_index=True)
        values = values[np.argsort(first, kind="stable")]
        if bound_nodes:
            held: list[int] = []
            for pod_key, node_name in bound_nodes:
                node = tensors.node_index.get(node_name)
                if node is None:         # the snapshot's NodeInfos().Get fails
                    return CycleError(f"cannot determine domain for already scheduled pods: getting node for pod "
                                      f"{pod_key}: nodeinfo not found for node name {go_quote(node_name)}")
                d = int(domain[node])
                if d < 0:
                    return CycleError(f"cannot determine domain for already scheduled pods: no topology domain "
                                      f"found for pod {pod_key}")
                if held and d != held[0]:
                    names = tensors.node_labels.values[tensors.node_labels.keys.get(keys[0])].items
                    return CycleError(f"cannot determine domain for already scheduled pods: more than 1 domain "
                                      f"found for pod group: {names[held[0]]}, {names[d]}")
                held.append(d)
            values = np.array(held[:1], np.int64)
        return [np.flatnonzero(domain == v) for v in values.tolist()]
