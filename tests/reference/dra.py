"""Plain reference of the DynamicResources filter over node-local devices: node by node, device by device.

Written from the rules (docs/semantics.md, "Dynamic Resource Allocation"), independent of the kernel:

* a node not hosting every already-allocated claim of the pod fails with "resourceclaim not available on the
  node" (payload 1);
* otherwise the requests to allocate are taken in order, as upstream's structured allocator searches: an
  ExactCount request takes `count` free matching devices of the node not taken by an earlier request, trying
  every such set in lexicographic device order (itertools.combinations) and the later requests after each; an
  All request takes every matching device of the node and needs at least one, all of them free and not taken;
  the first complete assignment wins; none fails the node with "cannot allocate all claims" (payload 2);
* the devices a passing node assigns are reported as (slot -> request index).
"""
from __future__ import annotations

import itertools


def _assign(devices, allocated, requests, q, taken):
    if q == len(requests):
        return dict(taken)
    req = requests[q]
    matching = [d for d in devices if d in req["matches"]]
    if req["all"]:
        if not matching or any(allocated[d] or d in taken for d in matching):
            return None
        return _assign(devices, allocated, requests, q + 1, {**taken, **{d: q for d in matching}})
    usable = [d for d in matching if not allocated[d] and d not in taken]
    for chosen in itertools.combinations(usable, req["count"]):
        found = _assign(devices, allocated, requests, q + 1, {**taken, **{d: q for d in chosen}})
        if found is not None:
            return found
    return None


def dra_filter(node_devices: list[list[int]], allocated: list[bool], requests: list[dict], pinned: list[int]):
    """node_devices[n]: device ids of node n in order; requests: {"matches": set of device ids, "count": int,
    "all": bool}; pinned: node of each allocated claim. Returns per node (code, payload, {device: request})."""
    out = []
    for n, devices in enumerate(node_devices):
        if any(p != n for p in pinned):
            out.append((2, 1, {}))
            continue
        taken = _assign(devices, allocated, requests, 0, {})
        out.append((0, 0, taken) if taken is not None else (2, 2, {}))
    return out


def prioritized_assignment(devices: list[int], allocated: list[bool], rows: list[dict], requests: list[dict],
                           limit: int):
    """The first assignment {device: row} of one node for claim requests with prioritized lists, or None.

    rows: {"matches", "count", "all"} as above, one per `exactly` or subrequest; requests: {"rows": [row ids in list
    order], "claim": claim id}, in the allocator's order. Upstream's rule, written out directly: request by request,
    each alternative in list order with every choice of its devices (combinations in device order) before the next
    alternative; a claim may hold at most `limit` devices of ExactCount rows (an alternative that would pass it is
    never taken); the first complete assignment wins."""
    def assign(g: int, taken: dict, held: int):
        if g == len(requests):
            return dict(taken)
        if g == 0 or requests[g]["claim"] != requests[g - 1]["claim"]:
            held = 0
        for q in requests[g]["rows"]:
            row = rows[q]
            matching = [d for d in devices if d in row["matches"]]
            if row["all"]:
                if matching and not any(allocated[d] or d in taken for d in matching):
                    found = assign(g + 1, {**taken, **{d: q for d in matching}}, held)
                    if found is not None:
                        return found
                continue
            if held + row["count"] > limit:
                continue
            usable = [d for d in matching if not allocated[d] and d not in taken]
            for chosen in itertools.combinations(usable, row["count"]):
                found = assign(g + 1, {**taken, **{d: q for d in chosen}}, held + row["count"])
                if found is not None:
                    return found
        return None

    return assign(0, {}, 0)
