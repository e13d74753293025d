"""DynamicResources (DRA) Filter over node-local devices: allocated claims pin the node, the others are
allocated per node, request by request, in device order, searching as upstream's structured allocator does.

Upstream's Filter (pkg/scheduler/framework/plugins/dynamicresources) first checks the pod's claims that are
already allocated (or allocated earlier in the same PodGroup cycle): a node outside an allocation's node
selector fails with "resourceclaim not available on the node". Then the structured allocator tries to allocate
the remaining claims on the node; fewer results than claims fails with "cannot allocate all claims". Both are
UnschedulableAndUnresolvable. The requests are taken in order (claims in pod order, requests in claim order),
devices in the node's device order. The kernel gives each request the first free matching devices (first fit,
all nodes at once); where that fails on a node the allocated claims allow, `dynamic_resources_search` (host side,
node by node) searches the way upstream's allocator backtracks (k8s.io/dynamic-resource-allocation/structured:
device by device, undoing a choice when the later requests cannot be satisfied). Its answer is the first
assignment in upstream's search order, which is first fit whenever first fit succeeds. The allocation returned
for the chosen node is exactly what the filter checked. Where upstream's allocator returns an error the node's code
is ERROR (the caller's errors, some found by `first_error`, which replays the allocator's walk device by device).
"""
from __future__ import annotations

import numpy as np

from .status import ERROR, SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE

NOT_AVAILABLE_BIT = 1          # an allocated claim's node is not this node
CANNOT_ALLOCATE_BIT = 2        # the claims to allocate do not fit on this node's free devices
CANNOT_FIT_BIT = 4             # an extended resource asked for is neither on the node nor backed by DRA
STALE_CLAIM_BIT = 8            # the pod's claim for extended resources is one from an earlier cycle
REASONS = {NOT_AVAILABLE_BIT: "resourceclaim not available on the node",
           CANNOT_ALLOCATE_BIT: "cannot allocate all claims",
           CANNOT_FIT_BIT: "cannot fit resource",
           STALE_CLAIM_BIT: "cannot schedule extended resource claim"}


def dynamic_resources_filter(xp, slots, allocated, matches, counts, all_mode, pinned):
    """Per-node status, reason payload and the allocation the filter found.

    slots:     (N, S) int64 device ids per node in device order, -1 padding
    allocated: (D,) bool   devices already allocated (committed or pending); D >= 1 (callers pad)
    matches:   (Q, D) bool devices each request to allocate may take (class and request selectors)
    counts:    (Q,) or (N, Q) int64 devices each ExactCount request needs (per node: a request for an extended
               resource asks for none where the device plugin serves it)
    all_mode:  (Q,) bool   allocationMode All: every matching device of the node, at least one, all free
    pinned:    (K,) int64  node of each already-allocated claim of the pod (-1: its node left the cluster)
    returns code (N,) int64, payload (N,) int64, assign (N, S) int64 (request index per slot, -1 none)
    """
    n = slots.shape[0]
    counts = xp.broadcast_to(counts, (n, matches.shape[0]))
    allowed = xp.all(xp.arange(n, dtype=xp.int64)[:, None] == pinned[None, :], axis=1)
    valid = slots >= 0
    idx = xp.where(valid, slots, 0)
    free = valid & ~allocated[idx]
    taken = valid & False
    assign = xp.full(slots.shape, -1, dtype=xp.int64)
    ok = xp.ones((n,), dtype=bool)
    for q in range(matches.shape[0]):                  # requests in order (a static count), first fit
        m = valid & matches[q][idx]
        avail = m & free & ~taken
        rank = xp.cumsum(avail.astype(xp.int64), axis=1)
        exact_pick = avail & (rank <= counts[:, q][:, None])
        exact_ok = rank[:, -1] >= counts[:, q]
        all_ok = xp.all(~m | (free & ~taken), axis=1) & xp.any(m, axis=1)
        pick = xp.where(all_mode[q], m, exact_pick)
        enough = xp.where(all_mode[q], all_ok, exact_ok)
        pick = pick & enough[:, None]
        assign = xp.where(pick, q, assign)
        taken = taken | pick
        ok = ok & enough
    code = xp.where(allowed & ok, SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE).astype(xp.int64)
    payload = xp.where(~allowed, NOT_AVAILABLE_BIT, xp.where(ok, 0, CANNOT_ALLOCATE_BIT)).astype(xp.int64)
    return code, payload, assign


def _search(devices: list[int], free: np.ndarray, matches: np.ndarray, counts: list[int], all_mode: list[bool],
            q: int, taken: dict[int, int]) -> dict[int, int] | None:
    """The first assignment of requests q.. (device -> request) in upstream's search order, or None.

    Upstream's allocator tries devices one by one, in device order, backtracking on failure; without claim
    constraints a request's devices are interchangeable in order, so its first solution takes, request by
    request, the lexicographically first set of devices that leaves the later requests satisfiable. Devices
    that match the same later requests are interchangeable for those requests, so only the set that takes the
    earliest devices of each such kind is tried for each mix of kinds (any other set with the same mix succeeds
    or fails with it, and comes later in upstream's order)."""
    if q == len(counts):
        return dict(taken)
    usable = [d for d in devices if matches[q, d] and free[d] and d not in taken]
    if all_mode[q]:
        matching = [d for d in devices if matches[q, d]]
        if not matching or len(usable) != len(matching):
            return None
        return _search(devices, free, matches, counts, all_mode, q + 1, {**taken, **{d: q for d in matching}})
    need = counts[q]
    if len(usable) < need:
        return None
    kinds: dict[tuple, list[int]] = {}
    for d in usable:
        kinds.setdefault(tuple(matches[q + 1:, d].tolist()), []).append(d)
    groups = list(kinds.values())
    candidates = []
    position = {d: i for i, d in enumerate(devices)}

    def mixes(i: int, left: int, chosen: list[int]) -> None:
        if i == len(groups):
            if left == 0:
                candidates.append(sorted(chosen, key=position.__getitem__))
            return
        for k in range(min(left, len(groups[i])), -1, -1):
            mixes(i + 1, left - k, chosen + groups[i][:k])

    mixes(0, need, [])
    for chosen in sorted(candidates, key=lambda c: [position[d] for d in c]):
        found = _search(devices, free, matches, counts, all_mode, q + 1, {**taken, **{d: q for d in chosen}})
        if found is not None:
            return found
    return None


def dynamic_resources_search(slots, allocated, matches, counts, all_mode, code, payload, assign):
    """The kernel's result (code, payload, assign) completed on the host: every node where first fit could not
    allocate the claims (payload CANNOT_ALLOCATE_BIT) is searched as upstream's allocator backtracks; a node where
    an assignment exists passes with it. numpy arrays in and out."""
    code, payload, assign = np.array(code), np.array(payload), np.array(assign)
    retry = np.flatnonzero(payload == CANNOT_ALLOCATE_BIT)
    if not retry.size:
        return code, payload, assign
    slots, allocated, matches = np.asarray(slots), np.asarray(allocated), np.asarray(matches)
    free = ~allocated
    counts, all_mode = np.broadcast_to(np.asarray(counts), (slots.shape[0], matches.shape[0])), np.asarray(all_mode)
    # Only nodes where each request on its own could be satisfied can have an assignment (most nodes that first
    # fit rejects lack the devices altogether): (N, Q) free matching devices per request.
    valid = slots >= 0
    idx = np.where(valid, slots, 0)
    m = matches[:, idx] & valid[None]                                        # (Q, N, S)
    usable = (m & free[idx][None]).sum(axis=2).T                             # (N, Q)
    alone = np.where(all_mode[None], (usable == m.sum(axis=2).T) & (usable > 0), usable >= counts)
    retry = retry[alone[retry].all(axis=1)]
    all_mode = all_mode.tolist()
    for node in retry.tolist():
        row = slots[node]
        devices = [int(d) for d in row if d >= 0]
        found = _search(devices, free, matches, counts[node].tolist(), all_mode, 0, {})
        if found is not None:
            code[node], payload[node] = SUCCESS, 0
            assign[node] = [found.get(int(d), -1) if d >= 0 else -1 for d in row]
    return code, payload, assign


def dynamic_resources_allocate(xp, slots, allocated, matches, counts, all_mode, pinned, errors=None, unfit=None,
                               stale: bool = False):
    """The DynamicResources Filter: the kernel, then the host search where first fit fails (numpy results).
    errors: (N,) int64 nodes where upstream's allocator returns an error (an index into the caller's messages, the
    payload there; -1 none), or None: its Error status stands whatever the devices, even where an allocated claim
    is not available (upstream runs the allocator before it reports that). unfit: (N,) bool nodes that fail first,
    before any claim is looked at (filterExtendedResources: an extended resource the node neither advertises nor
    gets from DRA), or None. stale: the pod's claim for extended resources is one from an earlier cycle, which
    filterExtendedResources refuses on every node before anything else."""
    code, payload, assign = dynamic_resources_filter(xp, slots, allocated, matches, counts, all_mode, pinned)
    code, payload, assign = dynamic_resources_search(slots, allocated, matches, counts, all_mode, code, payload, assign)
    if errors is not None:
        failed = np.asarray(errors) >= 0
        code[failed], payload[failed], assign[failed] = ERROR, np.asarray(errors)[failed], -1
    if unfit is not None:
        unfit = np.asarray(unfit)
        code[unfit], payload[unfit], assign[unfit] = UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_FIT_BIT, -1
    if stale:
        code[:], payload[:], assign[:] = UNSCHEDULABLE_AND_UNRESOLVABLE, STALE_CLAIM_BIT, -1
    return code, payload, assign


def first_error(devices: list[int], free: np.ndarray, matches: np.ndarray, failing: np.ndarray, counts: list[int],
                all_mode: list[bool]) -> tuple[int, int] | None:
    """The first (request, device) whose selectors fail to evaluate that upstream's allocator walk meets on one node,
    or None when the walk ends (with or without a solution) before meeting one.

    devices: the node's devices in walk order (complete pools only); free: (D,) bool not allocated; matches: (Q, D)
    bool devices each request may take; failing: (Q, D) bool the request's selectors fail on the device (no
    match); counts / all_mode per request. Upstream (allocateOne) fills request by request, device by device: for
    each device of a request it walks the node's devices from the first, skipping those allocated or taken in this
    search, evaluating the selectors of each other one (an error ends the allocation) and taking the first it may,
    backtracking into the next when the later devices or requests cannot be satisfied. A request for All devices
    takes its matching devices as they are (its selectors were evaluated before the walk). Evaluations are cached
    and the walk is deterministic, so a failed state (request, device index, devices taken) is never worth walking
    twice: it meets no new device."""
    failed: set = set()

    class Met(Exception):
        pass

    def walk(q: int, i: int, taken: frozenset) -> bool:
        if q == len(counts):
            return True
        state = (q, i, taken)
        if state in failed:
            return False
        if all_mode[q]:
            own = [d for d in devices if matches[q, d]]
            done = bool(own) and all(free[d] and d not in taken for d in own) and walk(q + 1, 0, taken | set(own))
        elif i == counts[q]:
            done = walk(q + 1, 0, taken)
        else:
            done = False
            for d in devices:
                if not free[d] or d in taken:
                    continue
                if failing[q, d]:
                    raise Met(q, d)
                if matches[q, d] and walk(q, i + 1, taken | {d}):
                    done = True
                    break
        if not done:
            failed.add(state)
        return done

    try:
        walk(0, 0, frozenset())
    except Met as met:
        return met.args
    return None
