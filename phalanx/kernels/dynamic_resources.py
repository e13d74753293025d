"""DynamicResources (DRA) Filter over node-local devices: allocated claims pin the node, the others are
allocated per node, request by request, first fit in device order.

Upstream's Filter (pkg/scheduler/framework/plugins/dynamicresources) first checks the pod's claims that are
already allocated (or allocated earlier in the same PodGroup cycle): a node outside an allocation's node
selector fails with "resourceclaim not available on the node". Then the structured allocator tries to allocate
the remaining claims on the node; fewer results than claims fails with "cannot allocate all claims". Both are
UnschedulableAndUnresolvable. phalanx's allocator takes the requests in order (claims in pod order, requests in
claim order) and gives each the first free matching devices of the node in device order; upstream searches
with backtracking, so phalanx can reject a node where a different assignment would have fit (docs/semantics.md).
The allocation returned for the chosen node is exactly what the filter checked.
"""
from __future__ import annotations

from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE

NOT_AVAILABLE_BIT = 1          # an allocated claim's node is not this node
CANNOT_ALLOCATE_BIT = 2        # the claims to allocate do not fit on this node's free devices
REASONS = {NOT_AVAILABLE_BIT: "resourceclaim not available on the node",
           CANNOT_ALLOCATE_BIT: "cannot allocate all claims"}


def dynamic_resources_filter(xp, slots, allocated, matches, counts, all_mode, pinned):
    """Per-node status, reason payload and the allocation the filter found.

    slots:     (N, S) int64 device ids per node in device order, -1 padding
    allocated: (D,) bool   devices already allocated (committed or pending); D >= 1 (callers pad)
    matches:   (Q, D) bool devices each request to allocate may take (class and request selectors)
    counts:    (Q,) int64  devices each ExactCount request needs
    all_mode:  (Q,) bool   allocationMode All: every matching device of the node, at least one, all free
    pinned:    (K,) int64  node of each already-allocated claim of the pod (-1: its node left the cluster)
    returns code (N,) int64, payload (N,) int64, assign (N, S) int64 (request index per slot, -1 none)
    """
    n = slots.shape[0]
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
        exact_pick = avail & (rank <= counts[q])
        exact_ok = rank[:, -1] >= counts[q]
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
