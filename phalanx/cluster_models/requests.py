"""What a pod asks of a node, computed as kube-scheduler v1.36 computes it.

Mirrors k8s.io/component-helpers/resource/helpers.go (v0.36): AggregateContainerRequests / Limits,
PodRequests with and without NonMissingContainerRequests; pkg/scheduler/framework PodInfo.CalculateResource
and getNonMissingContainerRequests for the non-zero requests; and the priority admission plugin for
effective_priority. Sums are taken over exact quantities (nano-units) and rounded once at the end, as upstream
adds resource.Quantity values exactly and calls MilliValue()/Value() on the total.

The scheduler calls PodRequests with UseStatusResources (InPlacePodVerticalScaling is GA); with no container
statuses in the input that reads the spec, which is what happens here. Pod-level resources (PodLevelResources)
are on.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .errors import InputError
from .quantity import NANO, QuantityError, ResourceList, int64_to_nanos, nanos_to_int64

if TYPE_CHECKING:
    from .objects import Container, Pod, PriorityClass
    from .workloads import PodGroup

DEFAULT_MILLI_CPU_REQUEST = 100  # pkg/scheduler/util.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # pkg/scheduler/util.DefaultMemoryRequest
_NON_ZERO_DEFAULTS = {"cpu": DEFAULT_MILLI_CPU_REQUEST * NANO // 1000, "memory": DEFAULT_MEMORY_REQUEST * NANO}

# Priorities of the PriorityClasses every API server creates at start-up (scheduling.SystemPriorityClasses).
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}

Nanos = dict[str, int]  # resource name -> exact amount in nano-units


def _exact(resources: Mapping[str, int]) -> Nanos:
    if isinstance(resources, ResourceList):
        return resources.all_nanos()
    return {name: int64_to_nanos(name, count) for name, count in resources.items()}


def _add(total: Nanos, more: Nanos) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def _max_into(peak: Nanos, candidate: Nanos) -> None:
    for name, amount in candidate.items():
        if name not in peak or amount > peak[name]:
            peak[name] = amount


def is_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def aggregate_containers(pod: Pod, pick: Callable[[Container], Mapping[str, int]],
                         defaults: Nanos | None = None) -> Nanos:
    """AggregateContainerRequests (pick = requests) or AggregateContainerLimits (pick = limits).

    max(app containers + restartable init containers (sidecars), the peak of each init container's
    running total), where an init container's running total is itself plus every sidecar declared before it
    (a sidecar's running total is all sidecars so far, itself included). `defaults` fills a resource a
    container leaves out entirely (applyNonMissing): present keys, even explicit zeros, are kept.
    """
    def own(container: Container) -> Nanos:
        amounts = _exact(pick(container))
        for name, amount in (defaults or {}).items():
            amounts.setdefault(name, amount)
        return amounts

    total: Nanos = {}
    for container in pod.spec.containers:
        _add(total, own(container))
    sidecars: Nanos = {}
    init_peak: Nanos = {}
    for container in pod.spec.init_containers:
        amounts = own(container)
        if container.restart_policy == "Always":
            _add(total, amounts)
            _add(sidecars, amounts)
            running = sidecars
        else:
            running = dict(amounts)
            _add(running, sidecars)
        _max_into(init_peak, running)
    _max_into(total, init_peak)
    return total


def _requests(container: Container) -> Mapping[str, int]:
    return container.resources.requests


def _limits(container: Container) -> Mapping[str, int]:
    return container.resources.limits


def _pod_level_requests_set(pod: Pod) -> bool:
    """IsPodLevelRequestsSet: spec.resources.requests names cpu, memory or a hugepages size."""
    level = pod.spec.resources
    return level is not None and any(is_pod_level_resource(name) for name in level.requests)


def _pod_request_nanos(pod: Pod, defaults: Nanos | None) -> Nanos:
    """PodRequests(pod, opts): containers, then pod-level requests replace cpu/memory/hugepages, then overhead."""
    total = aggregate_containers(pod, _requests, defaults)
    if _pod_level_requests_set(pod):
        level = pod.spec.resources.requests
        for name, amount in _exact(level).items():
            if is_pod_level_resource(name):
                total[name] = amount
    _add(total, _exact(pod.spec.overhead))
    return total


def _counts(pod: Pod, amounts: Nanos) -> dict[str, int]:
    try:
        return {name: nanos_to_int64(name, amount) for name, amount in amounts.items()}
    except QuantityError as error:
        raise InputError(f"Pod {pod.key}: total resource requests: {error}") from None


def pod_requests(pod: Pod) -> dict[str, int]:
    """PodRequests(pod, {}) as int64 counts (cpu in millicores, everything else in units), overhead included.

    Pod-level requests, when spec.resources.requests names cpu, memory or hugepages, replace the container
    aggregate for exactly those resources; other resources still come from the containers. InputError when a
    total does not fit int64.
    """
    return _counts(pod, _pod_request_nanos(pod, None))


def pod_nonzero_requests(pod: Pod) -> tuple[int, int]:
    """(millicores, memory bytes) that NodeInfo.NonZeroRequested accounts for the pod (PodInfo.CalculateResource).

    Without pod-level requests, every container (app, init and sidecar) that leaves cpu or memory out counts
    100m / 200Mi for it, before the init/sidecar aggregation; overhead is added as usual. With pod-level
    requests, the default applies only to a resource the whole PodRequests result lacks
    (getNonMissingContainerRequests), and then again per container that leaves it out.
    """
    return _nonzero(pod, _pod_request_nanos(pod, None))


def _nonzero(pod: Pod, requests: Nanos) -> tuple[int, int]:
    """pod_nonzero_requests from PodRequests' exact sums (`requests`, which the caller may have at hand)."""
    if _pod_level_requests_set(pod):
        defaults = {name: amount for name, amount in _NON_ZERO_DEFAULTS.items() if name not in requests}
    else:
        defaults = _NON_ZERO_DEFAULTS
    spec = pod.spec
    non_zero = requests
    # The defaults fill only what a container leaves out: when none does, the sums are PodRequests' own.
    for container in (*spec.containers, *spec.init_containers):
        asked = container.resources.requests
        if any(name not in asked for name in defaults):
            non_zero = _pod_request_nanos(pod, defaults)
            break
    counts = _counts(pod, {"cpu": non_zero.get("cpu", 0), "memory": non_zero.get("memory", 0)})
    return counts["cpu"], counts["memory"]


_LOADS_KEPT = 4096   # distinct request-bearing parts pod_load remembers
_loads: dict[tuple[int, ...], tuple] = {}


def pod_load(pod: Pod) -> tuple[dict[str, int], tuple[int, int]]:
    """(pod_requests, pod_nonzero_requests) of a pod, remembered for the spec parts they read (containers, init
    containers, pod-level resources, overhead): pods of one template share them even where their specs differ
    (nodeName, say). The results are shared: do not change them."""
    spec = pod.spec
    containers, init, resources, overhead = spec.containers, spec.init_containers, spec.resources, spec.overhead
    # Spelled out rather than mapped and zipped: every bound pod is read here (evictions, the dry run's rows).
    hit = _loads.get((id(containers), id(init), id(resources), id(overhead)))
    if hit is None or hit[0] is not containers or hit[1] is not init or hit[2] is not resources \
            or hit[3] is not overhead:
        if len(_loads) >= _LOADS_KEPT:
            _loads.clear()
        requests = _pod_request_nanos(pod, None)        # pod_requests' sums, also what _nonzero starts from
        hit = _loads[(id(containers), id(init), id(resources), id(overhead))] = (
            containers, init, resources, overhead, _counts(pod, requests), _nonzero(pod, requests))
    return hit[4], hit[5]


def pod_scoring_requests(pod: Pod) -> dict[str, int]:
    """The incoming pod's requests as the NodeResourcesFit scoring strategies read them.

    resourceAllocationScorer.calculatePodResourceRequest with useRequested=false: PodRequests with the
    100m / 200Mi defaults for every container missing cpu or memory, whether or not pod-level requests are
    set (unlike pod_nonzero_requests, which mirrors what NodeInfo accounts for pods already on a node).
    """
    return _counts(pod, _pod_request_nanos(pod, _NON_ZERO_DEFAULTS))


def pod_scoring_cpu_memory(pod: Pod, nonzero: tuple[int, int]) -> tuple[int, int]:
    """pod_scoring_requests' (cpu, memory), given the pod's pod_nonzero_requests: the same sums when the pod has no
    pod-level requests (both default every container that leaves cpu or memory out), so they are not made twice."""
    if not _pod_level_requests_set(pod):
        return nonzero
    scoring = pod_scoring_requests(pod)
    return scoring.get("cpu", 0), scoring.get("memory", 0)


def default_pod_resources(pod: Pod) -> None:
    """The resource defaulting of SetDefaults_Pod, on exact (not yet milli-rounded) quantities.

    A container limit without a request sets the request. With pod-level resources (PodLevelResources):
    defaultHugePagePodLimits, then defaultPodRequests. defaultPodLimits only touches limits, which the
    scheduler never reads, so it is left out.
    """
    for container in [*pod.spec.containers, *pod.spec.init_containers]:
        requests, limits = container.resources.requests, container.resources.limits
        for name in limits:
            if name not in requests:
                requests.put(name, limits.nanos(name))
    level = pod.spec.resources
    if level is None:
        return
    if level.limits or level.requests:
        # defaultHugePagePodLimits: summed container hugepage limits become the pod-level limit, unless the
        # pod level already has a request or a limit for that size.
        for name, amount in aggregate_containers(pod, _limits).items():
            if name.startswith("hugepages-") and name not in level.requests and name not in level.limits:
                level.limits.put(name, amount)
    if level.limits:
        # defaultPodRequests: overcommittable resources (cpu, memory) take the containers' aggregate request,
        # then any pod-level limit still without a request becomes the request.
        for name, amount in aggregate_containers(pod, _requests).items():
            if name in ("cpu", "memory") and name not in level.requests:
                level.requests.put(name, amount)
        for name in level.limits:
            if is_pod_level_resource(name) and name not in level.requests:
                level.requests.put(name, level.limits.nanos(name))


def effective_priority(pod: Pod, priority_classes: Mapping[str, PriorityClass]) -> int:
    """The pod's priority: spec.priority if set (the priority admission plugin already resolved it), else
    the value of spec.priorityClassName (the built-in system-node-critical / system-cluster-critical
    included), else the lowest-valued globalDefault class (upstream's choice when several exist), else 0.

    priority_classes maps class name -> PriorityClass. InputError when the named class does not exist.
    """
    if pod.spec.priority is not None:
        return pod.spec.priority
    name = pod.spec.priority_class_name
    if name:
        if name in priority_classes:
            return priority_classes[name].value
        if name in SYSTEM_PRIORITY_CLASSES:
            return SYSTEM_PRIORITY_CLASSES[name]
        raise InputError(f'Pod {pod.key}: spec.priorityClassName: PriorityClass "{name}" not found')
    default = global_default_class(priority_classes)
    return default.value if default is not None else 0


def pod_group_priority(group: PodGroup, priority_classes: Mapping[str, PriorityClass]) -> int:
    """util.PodGroupPriority: spec.priority, else the value of spec.priorityClassName (what the priority admission
    writes into spec.priority; the system classes included), else 0. InputError when the named class does not exist
    (admission refuses such a PodGroup). Member pods' priorities are not read."""
    spec = group.spec
    if spec.priority is not None:
        return spec.priority
    name = spec.priority_class_name
    if not name:
        return 0
    if name in priority_classes:
        return priority_classes[name].value
    if name in SYSTEM_PRIORITY_CLASSES:
        return SYSTEM_PRIORITY_CLASSES[name]
    raise InputError(f'PodGroup {group.key}: spec.priorityClassName: PriorityClass "{name}" not found')


def global_default_class(priority_classes: Mapping[str, PriorityClass]) -> PriorityClass | None:
    """The globalDefault PriorityClass a pod without priorityClassName gets: the lowest-valued one when several
    are marked (upstream's choice), None when none is."""
    defaults = [pc for pc in priority_classes.values() if pc.global_default]
    return min(defaults, key=lambda pc: pc.value) if defaults else None
