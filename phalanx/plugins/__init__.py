"""kube-scheduler's plugins, one module each (see framework.py for what a plugin is), and the registry that maps
the names a KubeSchedulerConfiguration uses to them."""
from __future__ import annotations

from .balanced_allocation import NodeResourcesBalancedAllocation
from .best_fit_score import BestFitScore
from .default_binder import DefaultBinder
from .default_preemption import DefaultPreemption
from .dot_product_score import DotProductScore
from .dynamic_resources import DynamicResources
from .fgd_score import FGDScore
from .framework import EXTENSION_POINTS, Plugin, PluginArgs, ProfileContext
from .gang_scheduling import GangScheduling
from .gpu_clustering_score import GpuClusteringScore
from .gpu_packing_score import GpuPackingScore
from .gpu_share import GpuShare
from .image_locality import ImageLocality
from .interpod_affinity import InterPodAffinity
from .node_affinity import NodeAffinity
from .node_ports import NodePorts
from .node_resources_fit import NodeResourcesFit
from .node_unschedulable import NodeUnschedulable
from .node_volume_limits import NodeVolumeLimits
from .pod_group_pods_count import PodGroupPodsCount
from .pod_topology_spread import PodTopologySpread
from .queue_sort import PrioritySort
from .random_score import RandomScore
from .scheduling_gates import SchedulingGates
from .taint_toleration import TaintToleration
from .topology_placement import TopologyPlacementGenerator
from .volume_binding import VolumeBinding
from .volume_restrictions import VolumeRestrictions
from .volume_zone import VolumeZone

REGISTRY: dict[str, type[Plugin]] = {cls.name: cls for cls in (
    SchedulingGates, PrioritySort, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
    PodTopologySpread, InterPodAffinity, DynamicResources, GpuShare, NodeResourcesBalancedAllocation, ImageLocality,
    DefaultBinder, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone,
    GangScheduling, TopologyPlacementGenerator, PodGroupPodsCount, DefaultPreemption,
    # The GPU-cluster score policies of the FGD paper's simulator (plugins/gpu_scoring.py); never in the default set.
    FGDScore, BestFitScore, DotProductScore, GpuPackingScore, GpuClusteringScore, RandomScore,
)}

# Upstream plugins phalanx does not model, with the extension points they implement: a configuration may name
# them (they are reported as ignored), but they take no part in decisions.
UNMODELLED: dict[str, tuple[str, ...]] = {
    "NodeDeclaredFeatures": ("preFilter", "filter"),
    "NodeName": ("filter",),
}
# The args types of unmodelled plugins that upstream's configuration validation decodes and checks
# (validatePluginConfig): a bad pluginConfig for them is refused as upstream refuses it.
UNMODELLED_ARGS: dict[str, type[PluginArgs]] = {}

__all__ = ["EXTENSION_POINTS", "REGISTRY", "UNMODELLED", "UNMODELLED_ARGS", "Plugin", "PluginArgs", "ProfileContext"]
