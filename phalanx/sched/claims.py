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
fails); later users, in the same PodGroup cycle or later, only check that node. Every placement records a
`ClaimUndo`; `undo` (Placer.undo, newest first) restores device bits, allocations and user sets exactly.

Release (`release`, on pod deletion, completion or a Permit rejection): a pod stops using its claims; a claim
left with no user (bound, waiting at Permit or tentatively placed) is deallocated at once. Upstream keeps a
PodGroup's claim reserved until the PodGroup is deleted; phalanx follows the issue's rule (docs/semantics.md).
Per-pod template claims are deleted with their pod.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import InputError, Pod, PodGroup
from ..cluster_models.dra import DeviceClass, DeviceTable, ResourceClaim, ResourceClaimSpec, ResourceClaimTemplate
from ..kernels.dynamic_resources import dynamic_resources_allocate
from ..kernels.tolerations import tolerates

ALLOCATION_RESULTS_MAX_SIZE = 32      # resource.k8s.io AllocationResultsMaxSize: devices one claim may hold


@dataclass
class Claim:
    key: str                                  # "namespace/name"
    spec: ResourceClaimSpec
    owner: str | None = None                  # generated for this pod / PodGroup key; None: a ResourceClaim object
    devices: np.ndarray | None = None         # (k,) int64 allocated device rows by request; None: not allocated
    users: set[str] = field(default_factory=set)   # pods placed (bound, waiting or tentative) that use it


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
    matches: np.ndarray               # (Q, D + 1) bool devices each request to allocate may take
    counts: np.ndarray                # (Q,) int64
    all_mode: np.ndarray              # (Q,) bool
    pinned: np.ndarray                # (K,) int64 node of each allocated claim
    pending: list[tuple[str, int, int]]   # (claim, first request index, request count) of claims to allocate
    message: str | None = None        # PreFilter rejection (missing claim or device class)
    blocked: np.ndarray | None = None     # (N,) bool nodes where a request for All devices meets an incomplete pool
    error: str | None = None          # the Filter's error on every node (a claim asking for too many devices)

    def kernel_args(self, xp):
        return tuple(xp.asarray(a) for a in (self.slots, self.allocated, self.matches, self.counts, self.all_mode,
                                             self.pinned))

    def allocate(self, xp):
        """The Filter's (code, payload, assign), numpy: the kernel, the host search, incomplete pools."""
        return dynamic_resources_allocate(xp, *self.kernel_args(xp), blocked=self.blocked)


class ClaimBook:
    """The cluster's DRA objects and claim state."""

    def __init__(self, devices: DeviceTable, classes: list[DeviceClass] = (), templates: list[ResourceClaimTemplate] = (),
                 claims: list[ResourceClaim] = ()):
        self.devices = devices
        self.classes = {c.metadata.name: c for c in classes}
        self.templates = {t.key: t for t in templates}
        self.claims: dict[str, Claim] = {}
        self._generated: dict[tuple[str, str], str] = {}    # (owner, entry name) -> claim key
        self._refs: dict[str, tuple[list[str], str | None]] = {}   # pod key -> (claim keys, PreFilter problem)
        self._match: dict[tuple, np.ndarray] = {}          # (class, request conditions) -> (D,) bool
        # device row -> index of the request it was allocated for, in its claim (shared with restricted copies;
        # read only for rows a claim holds now, so stale entries never show)
        self._request_of: dict[int, int] = {}
        for c in claims:
            self.claims[c.key] = Claim(c.key, c.spec)
            if c.status.allocation is not None:
                self._load_allocation(c)
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
            names = [q.name for q in c.spec.devices.requests]
            self._request_of[d] = names.index(r.request) if r.request in names else -1
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
        return keys, problem

    def claims_of(self, pod: Pod) -> list[str]:
        return self._refs.get(pod.key, self._resolve(pod, None, create=False))[0]

    # -- PreFilter / Filter inputs ------------------------------------------------------------------------
    def prepare(self, pod: Pod) -> DraInputs:
        keys, problem = self._refs.get(pod.key) or self._resolve(pod, None, create=False)
        dev = self.devices
        d = dev.size
        matches, counts, all_mode, pinned, pending = [], [], [], [], []
        for key in keys if problem is None else ():
            claim = self.claims[key]
            if claim.devices is not None:
                if len(claim.devices):          # an empty allocation is available on every node
                    pinned.append(int(dev.node[claim.devices[0]]))
                continue
            first = len(counts)
            for req in claim.spec.devices.requests:
                exact = req.exactly
                cls = self.classes.get(exact.device_class_name)
                if cls is None:
                    problem = f"request {req.name}: device class {exact.device_class_name} does not exist"
                    break
                matches.append(self._matches(cls, exact.expressions, exact.tolerations))
                counts.append(exact.count_needed())
                all_mode.append(exact.allocation_mode == "All")
            if problem is not None:
                break
            pending.append((key, first, len(counts) - first))
        error = None
        if problem is None:
            # Upstream's allocator (at Filter, after every PreFilter check passed) refuses a claim asking for more
            # devices than a claim may hold, before it searches: an error status on every node, which fails the
            # scheduling cycle.
            for key, first, count in pending:
                total = sum(counts[first:first + count])
                if total > ALLOCATION_RESULTS_MAX_SIZE:
                    error = (f"claim {key}: number of requested devices {total} exceeds the claim limit of "
                             f"{ALLOCATION_RESULTS_MAX_SIZE}")
                    break
        if problem is not None:
            matches, counts, all_mode, pinned, pending = [], [], [], [], []
        q = len(counts)
        padded = np.zeros((q, d + 1), bool)
        if q:
            padded[:, :d] = np.stack(matches)
        # Upstream's allocator refuses a request for All devices on a node with an incomplete pool ("asks for all
        # devices, but resource pool ... is currently being updated").
        blocked = dev.incomplete if any(all_mode) and dev.incomplete is not None and dev.incomplete.any() else None
        return DraInputs(pod.key, keys, dev.slots, np.append(dev.allocated, True), padded,
                         np.array(counts, np.int64).reshape(q), np.array(all_mode, bool).reshape(q),
                         np.array(pinned, np.int64).reshape(len(pinned)), pending, problem, blocked, error)

    def _matches(self, cls: DeviceClass, expressions: tuple[str, ...], tolerations=()) -> np.ndarray:
        """(D,) bool: devices the class's and the request's CEL selectors all match and whose NoSchedule /
        NoExecute taints the request tolerates (DRADeviceTaints, on in v1.36: the allocator's allTaintsTolerated,
        with v1.Toleration's Equal / Exists rule)."""
        key = (cls.metadata.name, expressions, tuple((t.key, t.operator, t.value, t.effect) for t in tolerations))
        hit = self._match.get(key)
        if hit is None:
            hit = np.ones(self.devices.size, bool)
            for expression in (*cls.expressions, *expressions):
                hit = hit & self.devices.selected(expression)
            for row, hard in self.devices.taints.items():
                hit[row] &= all(any(tolerates(t, *taint) for t in tolerations) for taint in hard)
            self._match[key] = hit
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
                    if request.exactly is not None:
                        check(request.exactly.expressions,
                              f"{kind} {obj.key}: {path}.devices.requests[{j}].exactly.selectors")

    # -- placements ---------------------------------------------------------------------------------------
    def allocate(self, dra: DraInputs, node: int, assign) -> ClaimUndo:
        """The pod placed on `node` uses its claims; the unallocated ones get the devices the filter assigned
        there (assign: the kernel's (N, S) request index per slot)."""
        row = np.asarray(assign)[node]
        slots = self.devices.slots[node]
        rec = ClaimUndo(dra.pod)
        for key, first, count in dra.pending:
            sel = (row >= first) & (row < first + count)
            order = np.argsort(row[sel], kind="stable")
            devices = slots[sel][order]
            self._request_of.update(zip(devices.tolist(), (row[sel][order] - first).tolist()))
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
                del self.claims[key]

    def add_bound(self, pod: Pod, node: int, group: PodGroup | None) -> str | None:
        """A pod already on `node` in the input: it uses its claims; unallocated ones are allocated there when
        they fit. Returns a warning when they do not (the pod stays, its claims stay unallocated)."""
        self.register(pod, group)
        if not pod.spec.resource_claims:
            return None
        dra = self.prepare(pod)
        code, _, assign = dra.allocate(np)
        if dra.message is not None or dra.error is not None or code[node] != 0:
            return (f"Pod {pod.key}: spec.resourceClaims: "
                    f"{dra.message or dra.error or 'the claims cannot be allocated on its node'}; not accounted")
        self.allocate(dra, node, assign)
        return None

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
                names = [r.name for r in claim.spec.devices.requests]
                for d in claim.devices.tolist():
                    driver, pool, device = self.devices.keys[d]
                    index = self._request_of.get(d, -1)
                    held.append({"claim": key, "request": names[index] if 0 <= index < len(names) else "",
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
