"""DRA claim state: which ResourceClaims exist, which are allocated to which devices (and so to which node),
who uses them, and exact undo records for tentative allocations (KEP-5729 PodGroup claims included).

Claims of a pod (`register`, when the pod arrives or joins its PodGroup):
  - an entry that matches an entry of its PodGroup's spec.resourceClaims exactly (same name, same
    resourceClaimName, same resourceClaimTemplateName) is a *group claim*: a template gives one claim per
    PodGroup, named `<podGroup>-<entry name>` (upstream: generateName `<podGroup>-<entry name>-`), shared by
    every member that references it;
  - any other entry is a per-pod claim: a template gives one claim per pod, `<pod>-<entry name>`
    (upstream: generateName); resourceClaimName names a ResourceClaim object, shared by every pod naming it.
  Generated names that collide with an existing claim get `-2`, `-3`, ... so runs stay deterministic.

Allocation (`allocate`): the first placed pod that uses an unallocated claim allocates it on its node (the
DynamicResources Filter's assignment for that node: first fit, or upstream's backtracking search where first fit
fails); later users, in the same PodGroup cycle or later, only check that node. A request with a prioritized list
(firstAvailable) becomes one kernel row per subrequest, grouped by a `RequestLayout`; exactly one row of the group is
allocated, and its devices' results name "<request>/<subrequest>". A claim's matchAttribute constraints become
`MatchConstraint`s over its rows (the rows of the requests they name), which the host search keeps. Every placement records a
`ClaimUndo`; `undo` (Placer.undo, newest first) restores device bits, allocations and user sets exactly. Where
upstream's allocator would return an error instead (a request for All devices meeting a pool being updated, a claim
over the claim limit, a selector failing on a device the allocator evaluates), `prepare` gives the Filter that error
for the node (`_allocator_errors`); the cycle fails with it.

Release (`release`, on pod deletion, completion or a Permit rejection): a pod stops using its claims; a claim
left with no user (bound, waiting at Permit or tentatively placed) is deallocated at once. Upstream keeps a
PodGroup's claim reserved until the PodGroup is deleted; phalanx follows the issue's rule (docs/semantics.md).
Per-pod template claims are deleted with their pod.

Extended resources backed by DRA (DRAExtendedResource, beta and on in v1.36; upstream's
dynamicresources/extendeddynamicresources.go): a pod asking for an extended resource that a DeviceClass names in
spec.extendedResourceName (or the implicit `deviceclass.resource.kubernetes.io/<class>`) gets one more claim of its
own, `<pod>-extended-resources` (upstream: generateName `<pod>-extended-resources-`), after its other claims: one
ExactCount request per container and resource (createRequestsAndMappings). On a node that advertises the resource
(allocatable > 0) the device plugin serves it and the request asks for nothing there; elsewhere it is allocated with
the pod's other claims. A pending pod's input claim for extended resources (annotated, the pod its controller) is
from an earlier cycle: the Filter refuses every node and PostFilter deletes it (`delete_stale`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import InputError, Pod, PodGroup
from ..cluster_models.dra import (DeviceClaim, DeviceClass, DeviceRequest, DeviceTable, ExactDeviceRequest,
                                  ResourceClaim, ResourceClaimSpec, ResourceClaimTemplate)
from ..cluster_models.objects import is_extended_resource_name
from ..cluster_models.requests import pod_load
from ..kernels.dynamic_resources import (ALLOCATION_RESULTS_MAX_SIZE, MatchConstraint, RequestLayout,
                                         dynamic_resources_allocate, first_error)
from ..kernels.tolerations import tolerates

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"   # resourceapi.ResourceDeviceClassPrefix
# resourceapi.ExtendedResourceClaimAnnotation: marks the claim the scheduler made for a pod's extended resources
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
EXTENDED_CLAIM = "extended-resources"   # the pod's claim for extended resources backed by DRA: <pod>-extended-resources
# Upstream's in-memory name of that claim until PreBind creates it (specialClaimInMemName): the allocator's errors
# name it so.
SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"


@dataclass
class Claim:
    key: str                                  # "namespace/name"
    spec: ResourceClaimSpec
    owner: str | None = None                  # generated for this pod / PodGroup key; None: a ResourceClaim object
    devices: np.ndarray | None = None         # (k,) int64 allocated device rows by request; None: not allocated
    users: set[str] = field(default_factory=set)   # pods placed (bound, waiting or tentative) that use it
    # The extended resource each request serves, for a pod's claim for extended resources backed by DRA; None for
    # any other claim.
    resources: tuple[str, ...] | None = None
    # A pending pod's claim for extended resources from an earlier cycle (an input claim): Filter refuses every node
    # until PostFilter deletes it (ClaimBook.delete_stale).
    stale: bool = False


@dataclass(frozen=True)
class RequestMatch:
    """What a request's selectors make of each device (upstream's isSelectable: the class's selectors, then the
    request's, each list in order up to the first that is false)."""
    matches: np.ndarray        # (D,) bool every selector matches and the request tolerates the device's taints
    failing: np.ndarray        # (D,) int64 the selector (its position among the class's then the request's) whose
                               # evaluation fails on the device before one is false; -1 none
    fails: bool                # on some device


@dataclass(frozen=True)
class PendingRequest:
    """A request row of a claim to allocate (its `exactly`, or one subrequest of its prioritized list), with what its
    allocator errors name."""
    claim: str                 # the claim as upstream's errors name it: namespace/name (or its in-memory name)
    name: str                  # the request's name, or the subrequest's alone (as the allocator's errors name it)
    result: str                # the request name its allocation results give ("<request>/<subrequest>" for a subrequest)
    cls: DeviceClass
    expressions: tuple[str, ...]
    match: RequestMatch


@dataclass
class ClaimUndo:
    """What one placement changed: the claims its pod started using, and those it allocated (with the devices)."""
    pod: str
    used: list[str] = field(default_factory=list)
    allocated: list[str] = field(default_factory=list)
    devices: list[np.ndarray] = field(default_factory=list)     # per allocated claim, its device rows


@dataclass
class DraInputs:
    """The DynamicResources PreFilter result of one pod: the kernel's inputs, or a PreFilter rejection."""
    pod: str
    claims: list[str]                 # the pod's claims, pod order
    slots: np.ndarray                 # (N, S) int64 device ids per node
    allocated: np.ndarray             # (D + 1,) bool device allocated (one padding row, allocated)
    matches: np.ndarray               # (Q, D + 1) bool devices each request row to allocate may take
    counts: np.ndarray                # (N, Q) int64 devices per row and node (0: the request asks for none there)
    all_mode: np.ndarray              # (Q,) bool
    pinned: np.ndarray                # (K,) int64 node of each allocated claim
    pending: list[tuple[str, int, int]]   # (claim, first row, row count) of claims to allocate
    layout: RequestLayout             # the rows' requests (a prioritized list's subrequests are one request)
    results: tuple[str, ...]          # (Q,) the request name each row's allocation results give
    message: str | None = None        # PreFilter rejection (missing claim or device class)
    errors: np.ndarray | None = None  # (N,) int64 nodes where the allocator returns an error: index into `failures`
    failures: tuple[str, ...] = ()    # those errors' texts
    unfit: np.ndarray | None = None   # (N,) bool nodes neither advertising nor DRA-backing an extended resource asked
    stale: bool = False               # the pod's claim for extended resources is one from an earlier cycle
    constraints: tuple[MatchConstraint, ...] = ()    # the claims to allocate's matchAttribute constraints
    # allocate's answer per array namespace: the inputs are a snapshot, so the Filter's and the Score's are one
    _results: dict = field(default_factory=dict, repr=False, compare=False)

    def kernel_args(self, xp):
        return tuple(xp.asarray(a) for a in (self.slots, self.allocated, self.matches, self.counts, self.all_mode,
                                             self.pinned))

    def allocate(self, xp):
        """The Filter's (code, payload, assign), numpy: the kernel, the host search, the allocator's errors."""
        out = self._results.get(xp.__name__)
        if out is None:
            out = self._results[xp.__name__] = dynamic_resources_allocate(
                xp, *self.kernel_args(xp), layout=self.layout, errors=self.errors, unfit=self.unfit,
                stale=self.stale, constraints=self.constraints)
        return out


class ClaimBook:
    """The cluster's DRA objects and claim state."""

    def __init__(self, devices: DeviceTable, classes: list[DeviceClass] = (), templates: list[ResourceClaimTemplate] = (),
                 claims: list[ResourceClaim] = ()):
        self.devices = devices
        self.classes = {c.metadata.name: c for c in classes}
        self.extended = extended_resource_classes(classes)
        self.templates = {t.key: t for t in templates}
        self.claims: dict[str, Claim] = {}
        self._generated: dict[tuple[str, str], str] = {}    # (owner, entry name) -> claim key
        self._refs: dict[str, tuple[list[str], str | None]] = {}   # pod key -> (claim keys, PreFilter problem)
        self._match: dict[tuple, RequestMatch] = {}        # (class, request conditions) -> its devices
        # device row -> the request name its allocation result gives ("" when an input allocation names none of the
        # claim's requests); shared with restricted copies, read only for rows a claim holds now, so stale entries
        # never show
        self._request_of: dict[int, str] = {}
        # pod key -> (its uid, the key) of each input claim for a pod's extended resources (findExtendedResourceClaim)
        self._input_extended: dict[str, tuple[str, str]] = {}
        for c in claims:
            self.claims[c.key] = Claim(c.key, c.spec)
            if c.status.allocation is not None:
                self._load_allocation(c)
            if c.metadata.annotations.get(EXTENDED_CLAIM_ANNOTATION) == "true":
                for ref in c.metadata.owner_references:
                    if ref.controller:
                        self._input_extended[f"{c.metadata.namespace}/{ref.name}"] = (ref.uid, c.key)
        self._check_selectors(list(claims))

    @classmethod
    def from_objects(cls, objects, node_index: dict[str, int]) -> ClaimBook:
        devices = DeviceTable.build(list(objects.resource_slices), node_index)
        return cls(devices, objects.device_classes, objects.resource_claim_templates, objects.resource_claims)

    @classmethod
    def empty(cls, node_index: dict[str, int] | None = None) -> ClaimBook:
        return cls(DeviceTable.build([], node_index or {}))

    def _load_allocation(self, c: ResourceClaim) -> None:
        rows = []
        where = f"ResourceClaim {c.key}: status.allocation.devices.results"
        for i, r in enumerate(c.status.allocation.devices.results):
            d = self.devices.index.get((r.driver, r.pool, r.device))
            if d is None:
                raise InputError(f"{where}[{i}].device: no device {r.device!r} in pool {r.pool!r} of driver "
                                 f"{r.driver!r}")
            if self.devices.allocated[d] or d in rows:
                raise InputError(f"{where}[{i}].device: device {r.device!r} is allocated twice")
            rows.append(d)
            self._request_of[d] = r.request if r.request in c.spec.devices.result_names() else ""
        if len({self.devices.node_names[d] for d in rows}) > 1:
            raise InputError(f"{where}: devices on more than one node (phalanx models node-local devices only)")
        self.claims[c.key].devices = np.array(rows, np.int64).reshape(len(rows))
        self.devices.allocated[rows] = True

    # -- a pod's claims ---------------------------------------------------------------------------------
    def register(self, pod: Pod, group: PodGroup | None) -> None:
        """Resolve a pod's claims (its PodGroup decides which are group claims) and create the claims generated
        from templates, as the ResourceClaim controller would. A missing ResourceClaim or template is not an
        input error: the pod stays pending with upstream's PreFilter message."""
        if pod.spec.resource_claims:
            self._refs[pod.key] = self._resolve(pod, group, create=True)

    def _resolve(self, pod: Pod, group: PodGroup | None, create: bool) -> tuple[list[str], str | None]:
        ns = pod.metadata.namespace
        entries = {(e.name, e.resource_claim_name, e.resource_claim_template_name)
                   for e in (group.spec.resource_claims if group is not None else ())}
        keys: list[str] = []
        problem = None
        for ref in pod.spec.resource_claims:
            if ref.resource_claim_name is not None:
                key = f"{ns}/{ref.resource_claim_name}"
                if key not in self.claims and problem is None:
                    problem = f'resourceclaim.resource.k8s.io "{ref.resource_claim_name}" not found'
            else:
                shared = (ref.name, ref.resource_claim_name, ref.resource_claim_template_name) in entries
                owner, base = (group.key, group.metadata.name) if shared else (pod.key, pod.metadata.name)
                key = self._generated.get((owner, ref.name))
                template = self.templates.get(f"{ns}/{ref.resource_claim_template_name}")
                if key is None and template is not None and create:
                    key = f"{ns}/{base}-{ref.name}"
                    suffix = 2
                    while key in self.claims:
                        key, suffix = f"{ns}/{base}-{ref.name}-{suffix}", suffix + 1
                    self.claims[key] = Claim(key, template.spec.spec, owner)
                    self._generated[(owner, ref.name)] = key
                if key is None:
                    if problem is None:
                        problem = f'pod "{pod.key}": ResourceClaim not created yet'
                    continue
            if key not in keys:
                keys.append(key)
        extended = self.extended_requests(pod)
        if extended:
            keys.append(self._extended_claim(pod, extended))
        return keys, problem

    # -- extended resources backed by DRA ----------------------------------------------------------------
    def extended_requests(self, pod: Pod) -> dict[str, int]:
        """The pod's requests (PodRequests) for extended resources some DeviceClass backs, by name (empty for the
        usual pod)."""
        if not self.extended:
            return {}
        return {name: amount for name, amount in pod_load(pod)[0].items()
                if amount and name in self.extended}

    def _extended_claim(self, pod: Pod, extended: dict[str, int]) -> str:
        """The key of the pod's claim for extended resources backed by DRA, created on first use (upstream builds it
        in memory at every PreFilter; its requests depend only on the pod and the classes)."""
        key = self._generated.get((pod.key, EXTENDED_CLAIM))
        uid, found = self._input_extended.get(pod.key, ("", None))
        # The input claim the pod controls (findExtendedResourceClaim; hand-written input may lack UIDs: they are
        # compared only when both are known). A bound pod uses it: made for it when it was scheduled (the kubelet
        # reads it from the pod's status.extendedResourceClaimStatus, which phalanx does not read). A pending pod's,
        # with requests, is from an earlier cycle whose binding failed: upstream's Filter refuses it on every node
        # and PostFilter deletes it. One without requests (never written so by the scheduler) is left alone.
        if key is None and found is not None and (not uid or not pod.metadata.uid or uid == pod.metadata.uid) \
                and (pod.spec.node_name or self.claims[found].spec.devices.requests):
            key = self._generated[(pod.key, EXTENDED_CLAIM)] = found
            self.claims[found].stale = not pod.spec.node_name
        if key is None:
            key = f"{pod.metadata.namespace}/{pod.metadata.name}-{EXTENDED_CLAIM}"
            suffix = 2
            while key in self.claims:
                key, suffix = f"{pod.metadata.namespace}/{pod.metadata.name}-{EXTENDED_CLAIM}-{suffix}", suffix + 1
            requests, resources = extended_device_requests(pod, extended, self.extended)
            self.claims[key] = Claim(key, ResourceClaimSpec(devices=DeviceClaim(requests=requests)), pod.key,
                                     resources=resources)
            self._generated[(pod.key, EXTENDED_CLAIM)] = key
        return key

    def claims_of(self, pod: Pod) -> list[str]:
        return self._refs.get(pod.key, self._resolve(pod, None, create=False))[0]

    # -- PreFilter / Filter inputs ------------------------------------------------------------------------
    def prepare(self, pod: Pod, tensors) -> DraInputs:
        """The pod's Filter inputs on the cluster `tensors` (ClusterTensors: the nodes' allocatable decides where
        the device plugin serves an extended resource)."""
        refs = self._refs.get(pod.key)
        if refs is None:
            refs = self._resolve(pod, None, create=False)
            if self.extended_requests(pod):          # its claim for extended resources: released with the pod
                self._refs[pod.key] = refs
        keys, problem = refs
        dev = self.devices
        d = dev.size
        n = len(tensors.nodes.names)
        matches, counts, all_mode, pinned, pending, requests = [], [], [], [], [], []
        choices, claim_of = [], []          # the RequestLayout: per claim request, its rows and its claim
        constraints: list[MatchConstraint] = []
        unfit, stale = None, False
        for key in keys if problem is None else ():
            claim = self.claims[key]
            if claim.stale:
                # Upstream's PreFilter leaves it to Filter, which refuses every node before looking at any claim.
                stale = True
                continue
            if claim.devices is not None:
                if len(claim.devices):          # an empty allocation is available on every node
                    pinned.append(int(dev.node[claim.devices[0]]))
                continue
            first = len(counts)
            if claim.resources is not None:
                unfit, served = self._extended_nodes(pod, tensors)
            # How upstream's allocator errors name the claim (klog.KObj; the claim for extended resources by its
            # in-memory name until PreBind creates it).
            named = (f"{pod.metadata.namespace}/{SPECIAL_CLAIM_IN_MEM_NAME}" if claim.resources is not None
                     else key)
            for i, req in enumerate(claim.spec.devices.requests):
                rows = []
                for choice in req.choices():
                    spec = choice.spec
                    cls = self.classes.get(spec.device_class_name)
                    if cls is None:
                        # PreFilter names a subrequest "<request>/<subrequest>", as its allocation results do.
                        problem = f"request {choice.result}: device class {spec.device_class_name} does not exist"
                        break
                    match = self._matches(cls, spec.expressions, spec.tolerations)
                    rows.append(len(counts))
                    requests.append(PendingRequest(named, choice.name, choice.result, cls, spec.expressions, match))
                    matches.append(match.matches)
                    count = np.full(n, spec.count_needed(), np.int64)
                    if claim.resources is not None:      # none on a node whose device plugin serves the resource
                        count[served[claim.resources[i]]] = 0
                    counts.append(count)
                    all_mode.append(spec.allocation_mode == "All")
                if problem is not None:
                    break
                choices.append(tuple(rows))
                claim_of.append(len(pending))
            if problem is not None:
                break
            for constraint in claim.spec.devices.constraints:
                codes = np.append(dev.attribute_codes(constraint.match_attribute), -1)
                constraints.append(MatchConstraint(frozenset(q for q in range(first, len(counts))
                                                             if constraint.applies_to(requests[q].result)), codes))
            pending.append((key, first, len(counts) - first))
        if problem is not None:
            matches, counts, all_mode, pinned, pending, requests, unfit, stale = [], [], [], [], [], [], None, False
            choices, claim_of, constraints = [], [], []
        layout = RequestLayout(tuple(choices), tuple(claim_of))
        q = len(counts)
        padded = np.zeros((q, d + 1), bool)
        if q:
            padded[:, :d] = np.stack(matches)
        counts = np.stack(counts, axis=1) if q else np.zeros((n, 0), np.int64)
        constraints = tuple(constraints)
        errors, failures = (None, ()) if stale else self._allocator_errors(tensors.nodes.names, pending, requests,
                                                                           counts, all_mode, layout, constraints)
        return DraInputs(pod.key, keys, dev.slots, np.append(dev.allocated, True), padded, counts,
                         np.array(all_mode, bool).reshape(q), np.array(pinned, np.int64).reshape(len(pinned)), pending,
                         layout, tuple(r.result for r in requests), problem, errors, failures, unfit, stale,
                         constraints)

    def _allocator_errors(self, names, pending, requests: list[PendingRequest], counts: np.ndarray,
                          all_mode: list[bool], layout: RequestLayout, constraints: tuple[MatchConstraint, ...]
                          ) -> tuple[np.ndarray | None, tuple[str, ...]]:
        """Where upstream's allocator returns an error for the claims to allocate ((N,) int64 index into the texts,
        -1 none; None when it does nowhere), in Allocate's order: claim by claim, each request row for All devices
        (every subrequest of a prioritized list among them) counting its devices (a pool of the node being updated,
        or a selector failing on one of its devices, in device order), then the claim's device count against the
        claim limit (every node; a prioritized list counts its smallest subrequest); after all claims, the walk of
        the other rows over the node's devices (first_error: a selector failing on a device it reaches, or a device of
        a row for All devices that a constraint refuses). The Filter fails a node with the first (the framework then
        fails the cycle)."""
        dev = self.devices
        n = len(names)
        errors = np.full(n, -1, np.int64)
        texts: list[str] = []

        def fail(nodes, text: str) -> None:
            nodes = np.asarray(nodes, np.int64)
            nodes = nodes[errors[nodes] < 0]
            if nodes.size:
                errors[nodes] = len(texts)
                texts.append(text)

        def nodes_holding(devices: np.ndarray) -> set[int]:
            """The nodes of the devices where `devices` ((D,) bool) is true."""
            nodes = np.unique(dev.node[devices])
            return set(nodes[nodes >= 0].tolist())

        for index, (key, first, count) in enumerate(pending):
            for q in range(first, first + count):
                req = requests[q]
                if not all_mode[q]:
                    continue
                suspects = nodes_holding(req.match.failing >= 0) if req.match.fails else set()
                if dev.incomplete is not None:
                    suspects.update(np.flatnonzero(dev.incomplete).tolist())
                for node in sorted(suspects):
                    text = self._all_devices_error(names[node], req)
                    if text is not None:
                        fail([node], text)
            # Upstream counts All requests' matching devices too; phalanx does not (docs/semantics.md). A request with
            # a prioritized list counts the fewest devices one of its subrequests asks for (minDevicesPerRequest).
            least = [counts[:, list(rows)].min(axis=1) for rows, c in zip(layout.choices, layout.claim) if c == index]
            total = int(np.sum(least, axis=0).max(initial=0)) if least else 0
            if total > ALLOCATION_RESULTS_MAX_SIZE:
                fail(np.arange(n), f"claim {requests[first].claim}: number of requested devices {total} exceeds the "
                                   f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
        # The walk can meet an error on a node with a device some row's selectors fail on, or with a device of a row
        # for All devices that a constraint covers.
        walked = [q for q, req in enumerate(requests) if not all_mode[q] and req.match.fails]
        constrained = [q for q in range(len(requests)) if all_mode[q] and any(q in c.rows for c in constraints)]
        if walked or constrained:
            free = ~dev.allocated
            usable = np.ones(dev.size, bool) if dev.usable is None else dev.usable
            matches = np.stack([req.match.matches for req in requests])
            failing = np.stack([req.match.failing >= 0 for req in requests])
            suspects = set()
            for q in walked:
                suspects |= nodes_holding(failing[q] & usable)
            for q in constrained:
                suspects |= nodes_holding(matches[q] & usable)
            for node in sorted(suspects):
                if errors[node] >= 0:
                    continue
                devices = [int(v) for v in dev.slots[node] if v >= 0]
                met = first_error(devices, free, matches, failing, counts[node].tolist(), all_mode, layout,
                                  constraints)
                if met is None:
                    continue
                req = requests[met.row]
                fail([node], f"claim {req.claim}, request {req.name}: cannot add device "
                             f"{'/'.join(dev.keys[met.device])} because a claim constraint would not be satisfied"
                     if met.constraint else self._selector_error(req, met.device))
        return (errors, tuple(texts)) if texts else (None, ())

    def _all_devices_error(self, node_name: str, req: PendingRequest) -> str | None:
        """Upstream's error while it gathers the devices of a request for All devices on a node (validateDeviceRequest:
        the node's pools in order; a pool being updated stops it, else each device's selectors are evaluated), or
        None."""
        for pool in self.devices.node_pools.get(node_name, ()):
            if not pool.complete:
                return (f"claim {req.claim}, request {req.name}: asks for all devices, but resource pool "
                        f"{pool.driver}/{pool.pool} is currently being updated")
            for row in pool.rows:
                if req.match.failing[row] >= 0:
                    return self._selector_error(req, row)
        return None

    def _selector_error(self, req: PendingRequest, row: int) -> str:
        """Upstream's error for the request's selector that fails on device `row` (selectorsMatch)."""
        j = int(req.match.failing[row])
        own = req.cls.expressions
        expression = (*own, *req.expressions)[j]
        where = f"class {req.cls.metadata.name}: selector #{j}" if j < len(own) else \
            f"claim {req.claim}: selector #{j - len(own)}"
        return f"{where}: CEL runtime error: {self.devices.selected(expression).error(row)}"

    def _extended_nodes(self, pod: Pod, tensors) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        """filterExtendedResources per node: (the nodes that fail with "cannot fit resource", or None; per backed
        resource the nodes whose device plugin serves it). A backed resource comes from DRA where the node's
        allocatable is 0 (or absent); a resource named like a DRA one (IsDRAExtendedResourceName) that no class
        backs fails a node that does not advertise it. phalanx's node table does not tell an advertised 0 from
        an absent resource: both fail."""
        alloc = tensors.nodes.allocatable
        items = tensors.resources
        n = alloc.shape[0]
        unfit = np.zeros(n, bool)
        served = {}
        for name, amount in pod_load(pod)[0].items():
            if not amount or not (is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)):
                continue
            col = items.get(name)
            have = alloc[:, col] if 0 <= col < alloc.shape[1] else np.zeros(n, np.int64)
            if name in self.extended:
                served[name] = have != 0
            else:
                unfit |= have == 0
        return (unfit if unfit.any() else None), served

    def _matches(self, cls: DeviceClass, expressions: tuple[str, ...], tolerations=()) -> RequestMatch:
        """The devices the class's and the request's CEL selectors all match and whose NoSchedule / NoExecute taints
        the request tolerates (DRADeviceTaints, on in v1.36: the allocator's allTaintsTolerated, with v1.Toleration's
        Equal / Exists rule), and where the selectors fail to evaluate."""
        key = (cls.metadata.name, expressions, tuple((t.key, t.operator, t.value, t.effect) for t in tolerations))
        hit = self._match.get(key)
        if hit is None:
            alive = np.ones(self.devices.size, bool)
            failing = np.full(self.devices.size, -1, np.int64)
            for j, expression in enumerate((*cls.expressions, *expressions)):
                selection = self.devices.selected(expression)
                failing[alive & selection.failed] = j
                alive &= selection.matched
            for row, hard in self.devices.taints.items():
                alive[row] &= all(any(tolerates(t, *taint) for t in tolerations) for taint in hard)
            hit = self._match[key] = RequestMatch(alive, failing, bool((failing >= 0).any()))
        return hit

    def _check_selectors(self, claims: list[ResourceClaim]) -> None:
        """Evaluate every selector once on every device now, so that a CEL runtime error is an input error naming
        the selector instead of a failure in the middle of scheduling."""
        def check(expressions, where: str) -> None:
            for i, expression in enumerate(expressions):
                try:
                    self.devices.selected(expression)
                except ValueError as error:
                    raise InputError(f"{where}[{i}].cel.expression: {error}") from None

        for cls in self.classes.values():
            check(cls.expressions, f"DeviceClass {cls.metadata.name}: spec.selectors")
        for kind, objects, path in (("ResourceClaim", claims, "spec"),
                                    ("ResourceClaimTemplate", self.templates.values(), "spec.spec")):
            for obj in objects:
                spec = obj.spec if kind == "ResourceClaim" else obj.spec.spec
                for j, request in enumerate(spec.devices.requests):
                    where = f"{kind} {obj.key}: {path}.devices.requests[{j}]"
                    if request.exactly is not None:
                        check(request.exactly.expressions, f"{where}.exactly.selectors")
                    for k, sub in enumerate(request.first_available or ()):
                        check(sub.expressions, f"{where}.firstAvailable[{k}].selectors")

    # -- placements ---------------------------------------------------------------------------------------
    def allocate(self, dra: DraInputs, node: int, assign) -> ClaimUndo:
        """The pod placed on `node` uses its claims; the unallocated ones get the devices the filter assigned
        there (assign: the kernel's (N, S) request row per slot)."""
        row = np.asarray(assign)[node]
        slots = self.devices.slots[node]
        rec = ClaimUndo(dra.pod)
        for key, first, count in dra.pending:
            sel = (row >= first) & (row < first + count)
            order = np.argsort(row[sel], kind="stable")
            devices = slots[sel][order]
            self._request_of.update((d, dra.results[q]) for d, q in zip(devices.tolist(), row[sel][order].tolist()))
            self.claims[key].devices = devices
            self.devices.allocated[devices] = True
            rec.allocated.append(key)
            rec.devices.append(devices)
        for key in dra.claims:
            users = self.claims[key].users
            if dra.pod not in users:
                users.add(dra.pod)
                rec.used.append(key)
        return rec

    def undo(self, rec: ClaimUndo) -> None:
        """Exactly undo `allocate` (undo placements newest first)."""
        for key in rec.used:
            self.claims[key].users.discard(rec.pod)
        for key in reversed(rec.allocated):
            claim = self.claims[key]
            self.devices.allocated[claim.devices] = False
            claim.devices = None

    def restricted(self, node_index: dict[str, int]) -> ClaimBook:
        """A copy for a restricted copy of the cluster (topology.py tries each placement on one): same device
        rows, node ids of `node_index`, its own allocation state; objects and caches shared."""
        book = ClaimBook.__new__(ClaimBook)
        book.__dict__.update(self.__dict__)
        book.devices = dataclasses.replace(self.devices, allocated=self.devices.allocated.copy())
        book.devices.relink(node_index)
        book.claims = {k: dataclasses.replace(c, users=set(c.users)) for k, c in self.claims.items()}
        return book

    def replay(self, rec: ClaimUndo) -> ClaimUndo:
        """Apply here what `rec` did on a restricted copy (device rows are the same); returns this book's undo."""
        for key, devices in zip(rec.allocated, rec.devices):
            self.claims[key].devices = devices
            self.devices.allocated[devices] = True
        for key in rec.used:
            self.claims[key].users.add(rec.pod)
        return dataclasses.replace(rec)

    def release(self, pod_key: str) -> None:
        """The pod no longer uses its claims (deleted, completed, rejected at Permit); a claim it leaves without
        users is deallocated."""
        keys = self._refs.get(pod_key, ([], None))[0]
        for key in keys:
            claim = self.claims.get(key)
            if claim is None or pod_key not in claim.users:
                continue
            claim.users.discard(pod_key)
            if not claim.users and claim.devices is not None:
                self.devices.allocated[claim.devices] = False
                claim.devices = None

    def unregister(self, pod_key: str) -> None:
        """The pod is gone: release its claims and delete the ones generated for it alone."""
        if not self._refs and not self._generated:     # no pod has claims here (the usual cluster): nothing held
            return
        self.release(pod_key)
        self._refs.pop(pod_key, None)
        for (owner, name), key in list(self._generated.items()):
            if owner == pod_key:
                del self._generated[(owner, name)]
                claim = self.claims.pop(key)
                if claim.devices is not None:     # held by no pod (a stale claim for extended resources)
                    self.devices.allocated[claim.devices] = False

    def add_bound(self, pod: Pod, node: int, group: PodGroup | None, tensors) -> str | None:
        """A pod already on `node` in the input: it uses its claims; unallocated ones are allocated there when
        they fit. Returns a warning when they do not (the pod stays, its claims stay unallocated)."""
        self.register(pod, group)
        if not pod.spec.resource_claims and not self.extended_requests(pod):
            return None
        dra = self.prepare(pod, tensors)
        code, _, assign = dra.allocate(np)
        if dra.message is not None or code[node] != 0:
            error = dra.failures[dra.errors[node]] if dra.errors is not None and dra.errors[node] >= 0 else None
            return (f"Pod {pod.key}: {'spec.resourceClaims' if pod.spec.resource_claims else 'extended resources'}: "
                    f"{dra.message or error or 'the claims cannot be allocated on its node'}; not accounted")
        self.allocate(dra, node, assign)
        return None

    def delete_stale(self, pod: Pod) -> None:
        """PostFilter's deletion of the pod's claim for extended resources from an earlier cycle: its devices are
        free again and the pod has a claim of its own from now on (unallocated: upstream's next PreFilter makes it
        in memory)."""
        key = self._generated.pop((pod.key, EXTENDED_CLAIM))
        claim = self.claims.pop(key)
        if claim.devices is not None:
            self.devices.allocated[claim.devices] = False
        self._input_extended.pop(pod.key, None)
        fresh = self._extended_claim(pod, self.extended_requests(pod))
        keys, problem = self._refs[pod.key]
        self._refs[pod.key] = ([fresh if k == key else k for k in keys], problem)

    def allocations(self, pods) -> dict[str, list[dict[str, str]]]:
        """pod key -> the devices its allocated claims hold ({claim, request, driver, pool, device} each), for the
        pods of `pods` (keys) that have claims."""
        out = {}
        for pod_key, (keys, _) in self._refs.items():
            if pod_key not in pods:
                continue
            held = []
            for key in keys:
                claim = self.claims.get(key)
                if claim is None or claim.devices is None:
                    continue
                for d in claim.devices.tolist():
                    driver, pool, device = self.devices.keys[d]
                    held.append({"claim": key, "request": self._request_of.get(d, ""),
                                 "driver": driver, "pool": pool, "device": device})
            if held:
                out[pod_key] = held
        return out

    def relink(self, node_index: dict[str, int]) -> None:
        self.devices.relink(node_index)

    def snapshot(self) -> tuple:
        """Everything allocation changes, for exactness tests: device bits, each claim's devices and users."""
        return (self.devices.allocated.copy(),
                {k: (None if c.devices is None else c.devices.tolist(), sorted(c.users)) for k, c in self.claims.items()})


def extended_resource_classes(classes) -> dict[str, DeviceClass]:
    """The DRA manager's DeviceClassResolver (v1.36.0's ExtendedResourceCache) after the scheduler's informer added
    `classes` in its initial list order, by name: each class maps `deviceclass.resource.kubernetes.io/<name>` and its
    spec.extendedResourceName, except that a class meeting an explicit name already mapped to a class at least as
    good (newer metadata.creationTimestamp, the lower name on a tie: never the later-listed one) maps nothing, not
    even its implicit name (updateResourceName2class returns early; fixed after v1.36, kubernetes#141110)."""
    out: dict[str, DeviceClass] = {}
    for c in sorted(classes, key=lambda c: c.metadata.name):
        name = c.spec.extended_resource_name
        if name is not None:
            held = out.get(name)
            if held is not None and not _newer(c, held):
                continue
            out[name] = c
        out[DEVICE_CLASS_PREFIX + c.metadata.name] = c
    return out


def _newer(a: DeviceClass, b: DeviceClass) -> bool:
    ta, tb = a.metadata.creation_timestamp, b.metadata.creation_timestamp
    # An object without a timestamp sorts as the zero time (Go's zero metav1.Time).
    ka, kb = (ta is not None, ta), (tb is not None, tb)
    if ka != kb:
        return ka > kb
    return a.metadata.name < b.metadata.name


def extended_device_requests(pod: Pod, extended: dict[str, int], classes: dict[str, DeviceClass]
                             ) -> tuple[list[DeviceRequest], tuple[str, ...]]:
    """createRequestsAndMappings: the requests of the pod's claim for extended resources backed by DRA, sorted by
    name, and the resource each serves. Per resource (in name order): each long-lived container (app container or
    sidecar) asking for it gets `container-<i>-request-<j>` (i: its index in initContainers + containers, j: the
    resource's index in its sorted request names) for its amount; each other init container first reuses the
    requests of the long-lived containers from its own index on, and asks only for the rest; of those init
    requests only the largest (the first of equal ones) is kept."""
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    inits = len(pod.spec.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= inits or c.restart_policy == "Always"]
    short_lived = [i for i in range(inits) if i not in long_lived]
    out: list[tuple[DeviceRequest, str]] = []
    for resource in sorted(extended):
        if resource not in classes:       # as upstream: a resource no class backs gets no request
            continue
        cls = classes[resource].metadata.name

        def request(i: int, reusable: list) -> DeviceRequest | None:
            asked = containers[i].resources.requests
            if resource not in asked:
                return None
            want, fraction = divmod(asked.nanos(resource), 1_000_000_000)
            if want == 0 or fraction:       # Quantity.AsInt64 fails on a fraction: no request, as for 0
                return None
            have = 0
            for r in reusable:
                if r is not None:
                    have += r.exactly.count
                    if have >= want:
                        return None
            return DeviceRequest(name=f"container-{i}-request-{sorted(asked).index(resource)}",
                                 exactly=ExactDeviceRequest(device_class_name=cls, allocation_mode="ExactCount",
                                                            count=want - have))

        lived: list[DeviceRequest | None] = [None] * len(containers)
        for i in long_lived:
            lived[i] = request(i, [])
        largest = None
        for i in short_lived:
            r = request(i, lived[i:])
            if r is not None and (largest is None or largest.exactly.count < r.exactly.count):
                largest = r
        out += [(r, resource) for r in ([largest] if largest is not None else []) + lived if r is not None]
    out.sort(key=lambda pair: pair[0].name)
    return [r for r, _ in out], tuple(name for _, name in out)
