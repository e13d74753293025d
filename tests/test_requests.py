"""pod_requests / pod_nonzero_requests / pod_scoring_requests / effective_priority, worked out by hand.

Notation in comments: cpu in millicores (m), memory in Mi unless stated.
"""
import pytest

from phalanx.cluster_models import (
    InputError,
    Pod,
    PriorityClass,
    effective_priority,
    pod_nonzero_requests,
    pod_requests,
)
from phalanx.cluster_models.requests import pod_scoring_cpu_memory, pod_scoring_requests

Mi = 2**20
Gi = 2**30


def container(name, requests=None, limits=None, sidecar=False):
    spec = {"name": name, "resources": {}}
    if requests is not None:
        spec["resources"]["requests"] = requests
    if limits is not None:
        spec["resources"]["limits"] = limits
    if sidecar:
        spec["restartPolicy"] = "Always"
    return spec


def pod(containers=(), init=(), **spec):
    return Pod.model_validate({"metadata": {"name": "p"},
                               "spec": {"containers": list(containers), "initContainers": list(init), **spec}})


# -- pod_requests ----------------------------------------------------------------------------------------------

def test_app_containers_add_up():
    # 100m + 250m = 350m; 64Mi + 128Mi = 192Mi
    p = pod([container("a", {"cpu": "100m", "memory": "64Mi"}), container("b", {"cpu": "250m", "memory": "128Mi"})])
    assert pod_requests(p) == {"cpu": 350, "memory": 192 * Mi}


def test_init_container_sets_a_floor_per_resource():
    # cpu: max(app 100m, init 500m) = 500m; memory: max(app 1Gi, init 256Mi) = 1Gi
    p = pod([container("a", {"cpu": "100m", "memory": "1Gi"})],
            init=[container("i", {"cpu": "500m", "memory": "256Mi"})])
    assert pod_requests(p) == {"cpu": 500, "memory": Gi}


def test_sidecar_before_regular_init_container_runs_alongside_it():
    # app total = app 300m + sidecar 200m = 500m.
    # init "i" starts after the sidecar, so it needs 1000m + 200m = 1200m; the sidecar alone needs 200m.
    # max(500m, 1200m) = 1200m
    p = pod([container("a", {"cpu": "300m"})],
            init=[container("s", {"cpu": "200m"}, sidecar=True), container("i", {"cpu": "1"})])
    assert pod_requests(p) == {"cpu": 1200}


def test_sidecar_after_regular_init_container_does_not_overlap_it():
    # app total = 300m + 200m = 500m; init "i" runs before the sidecar starts: 1000m; sidecar: 200m.
    # max(500m, 1000m) = 1000m
    p = pod([container("a", {"cpu": "300m"})],
            init=[container("i", {"cpu": "1"}), container("s", {"cpu": "200m"}, sidecar=True)])
    assert pod_requests(p) == {"cpu": 1000}


def test_init_container_between_two_sidecars():
    # app total = 200m + s1 100m + s2 300m = 600m
    # running totals: s1 100m; i 1000m + s1 100m = 1100m; s2 100m + 300m = 400m -> peak 1100m
    p = pod([container("a", {"cpu": "200m"})],
            init=[container("s1", {"cpu": "100m"}, sidecar=True), container("i", {"cpu": "1"}),
                  container("s2", {"cpu": "300m"}, sidecar=True)])
    assert pod_requests(p) == {"cpu": 1100}


def test_pod_level_requests_replace_cpu_memory_and_hugepages_only():
    # pod level names cpu 2 and hugepages-2Mi 4Mi: both replace the container sums (1 cpu, 2Mi of hugepages).
    # memory and ephemeral-storage are not at pod level and come from the containers; ephemeral-storage at
    # pod level would not be a supported pod-level resource and is ignored there.
    p = pod([container("a", {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi", "hugepages-2Mi": "2Mi"})],
            resources={"requests": {"cpu": "2", "hugepages-2Mi": "4Mi", "ephemeral-storage": "5Gi"}})
    assert pod_requests(p) == {"cpu": 2000, "memory": Gi, "ephemeral-storage": Gi, "hugepages-2Mi": 4 * Mi}


def test_pod_level_requests_of_unsupported_resources_only_are_not_pod_level_requests():
    p = pod([container("a", {"cpu": "1", "ephemeral-storage": "1Gi"})],
            resources={"requests": {"ephemeral-storage": "5Gi"}})
    assert pod_requests(p) == {"cpu": 1000, "ephemeral-storage": Gi}


def test_overhead_is_added_after_pod_level_requests():
    # cpu: pod level 1000m + overhead 250m = 1250m; memory: containers 128Mi + overhead 64Mi = 192Mi
    p = pod([container("a", {"cpu": "100m", "memory": "128Mi"})],
            resources={"requests": {"cpu": "1"}}, overhead={"cpu": "250m", "memory": "64Mi"})
    assert pod_requests(p) == {"cpu": 1250, "memory": 192 * Mi}


def test_sums_are_exact_and_rounded_once():
    # memory 1.5 + 1.5 = 3 bytes (not ceil(1.5) + ceil(1.5) = 4).
    # cpu 0.0001 is stored by the API server as 1m (SetDefaults_ResourceList rounds up to milli first),
    # so two of them are 2m, not ceil(0.2m) = 1m.
    p = pod([container("a", {"memory": "1.5", "cpu": "0.0001"}), container("b", {"memory": "1.5", "cpu": "0.0001"})])
    assert pod_requests(p) == {"memory": 3, "cpu": 2}


def test_a_limit_without_a_request_is_the_request():
    p = pod([container("a", requests={"memory": "64Mi"}, limits={"cpu": "2", "memory": "1Gi"})])
    assert pod_requests(p) == {"cpu": 2000, "memory": 64 * Mi}


def test_pod_level_limits_default_pod_level_requests():
    # defaultPodRequests: cpu takes the containers' aggregate request (300m), memory, which no container
    # requests, takes the pod-level limit (1Gi).
    p = pod([container("a", {"cpu": "300m"})], resources={"limits": {"cpu": "1", "memory": "1Gi"}})
    assert pod_requests(p) == {"cpu": 300, "memory": Gi}


def test_empty_pod_requests_nothing():
    assert pod_requests(pod()) == {}


def test_total_outside_int64_is_an_input_error():
    # 8Ei is capped at 2^63-1 bytes; two of them do not fit int64
    p = pod([container("a", {"memory": "8Ei"}), container("b", {"memory": "8Ei"})])
    with pytest.raises(InputError) as caught:
        pod_requests(p)
    assert str(caught.value) == \
        'Pod default/p: total resource requests: quantity "18446744073709551614" out of range'


# -- non-zero requests -----------------------------------------------------------------------------------------

def test_nonzero_defaults_for_a_pod_without_requests():
    assert pod_nonzero_requests(pod([container("a")])) == (100, 200 * Mi)


def test_nonzero_defaults_apply_per_container_and_per_resource():
    # a: 500m + default 200Mi; b: default 100m + 200Mi -> 600m, 400Mi
    p = pod([container("a", {"cpu": "500m"}), container("b")])
    assert pod_nonzero_requests(p) == (600, 400 * Mi)


def test_nonzero_keeps_explicit_zero_requests():
    assert pod_nonzero_requests(pod([container("a", {"cpu": "0", "memory": "0"})])) == (0, 0)


def test_nonzero_defaults_apply_to_init_containers_before_the_max():
    # app: 100m / 200Mi (defaults); init: 1000m / 200Mi (memory default) -> max: 1000m, 200Mi
    p = pod([container("a")], init=[container("i", {"cpu": "1"})])
    assert pod_nonzero_requests(p) == (1000, 200 * Mi)


def test_nonzero_defaults_apply_to_sidecars():
    # app 100m/200Mi + sidecar 100m/200Mi (both defaulted) = 200m/400Mi; the sidecar's own peak is 100m/200Mi
    p = pod([container("a")], init=[container("s", sidecar=True)])
    assert pod_nonzero_requests(p) == (200, 400 * Mi)


def test_nonzero_includes_overhead():
    assert pod_nonzero_requests(pod([container("a")], overhead={"cpu": "50m"})) == (150, 200 * Mi)


def test_nonzero_with_pod_level_requests_defaults_only_what_the_pod_lacks():
    # PodRequests = {cpu: 1 (pod level), memory: 1Gi (container a)}: both present, so no defaults at all and
    # container b's missing memory is not counted (getNonMissingContainerRequests).
    p = pod([container("a", {"memory": "1Gi"}), container("b")], resources={"requests": {"cpu": "1"}})
    assert pod_nonzero_requests(p) == (1000, Gi)
    # The scoring path (calculatePodResourceRequest) defaults every container regardless: b adds 200Mi.
    assert pod_scoring_requests(p) == {"cpu": 1000, "memory": Gi + 200 * Mi}


def test_nonzero_with_pod_level_requests_defaults_a_missing_resource_per_container():
    # PodRequests = {memory: 1Gi (pod level)}; cpu missing everywhere, so each container counts 100m.
    p = pod([container("a"), container("b")], resources={"requests": {"memory": "1Gi"}})
    assert pod_nonzero_requests(p) == (200, Gi)


def test_nonzero_of_a_pod_without_containers():
    assert pod_nonzero_requests(pod()) == (0, 0)


# -- effective priority ----------------------------------------------------------------------------------------

def priority_class(name, value, global_default=False):
    return PriorityClass.model_validate({"metadata": {"name": name}, "value": value, "globalDefault": global_default})


CLASSES = {pc.metadata.name: pc for pc in [priority_class("gold", 1000), priority_class("low", 10, True),
                                           priority_class("lower", 5, True)]}


def test_spec_priority_wins_even_over_an_unknown_class():
    # The priority admission plugin already resolved it; dumps often lack the PriorityClass objects.
    assert effective_priority(pod(priority=7, priorityClassName="missing"), CLASSES) == 7


def test_named_class_value():
    assert effective_priority(pod(priorityClassName="gold"), CLASSES) == 1000


def test_system_classes_exist_without_objects():
    assert effective_priority(pod(priorityClassName="system-node-critical"), {}) == 2000001000
    assert effective_priority(pod(priorityClassName="system-cluster-critical"), {}) == 2000000000


def test_global_default_is_the_lowest_valued_one():
    assert effective_priority(pod(), CLASSES) == 5


def test_no_class_and_no_default_is_zero():
    assert effective_priority(pod(), {"gold": CLASSES["gold"]}) == 0


def test_unknown_class_is_an_input_error():
    with pytest.raises(InputError) as caught:
        effective_priority(pod(priorityClassName="platinum"), CLASSES)
    assert str(caught.value) == 'Pod default/p: spec.priorityClassName: PriorityClass "platinum" not found'


@pytest.mark.parametrize("containers,inits,extra,want", [
    # no pod-level requests: scoring's sums are the non-zero ones (each container missing cpu / memory defaulted)
    ([container("a", {"cpu": "300m"}), container("b")], [], {}, (400, 400 * Mi)),
    ([container("a", {"memory": "1Gi"})], [container("i", {"cpu": "2"}), container("s", {"cpu": "50m"}, sidecar=True)],
     {"overhead": {"cpu": "10m"}}, (2010, Gi + 200 * Mi)),   # max(a 100m + s 50m, i 2000m) + 10m; a 1Gi + s 200Mi
    # pod-level requests: scoring defaults every container whatever the pod level holds (b adds 200Mi)
    ([container("a", {"memory": "1Gi"}), container("b")], [], {"resources": {"requests": {"cpu": "1"}}},
     (1000, Gi + 200 * Mi)),
])
def test_scoring_cpu_memory_from_the_nonzero_requests(containers, inits, extra, want):
    """pod_scoring_cpu_memory reuses pod_nonzero_requests where the two agree (no pod-level requests) and is
    pod_scoring_requests' cpu and memory in every case."""
    p = pod(containers, init=inits, **extra)
    scoring = pod_scoring_requests(p)
    assert pod_scoring_cpu_memory(p, pod_nonzero_requests(p)) == (scoring["cpu"], scoring["memory"]) == want
