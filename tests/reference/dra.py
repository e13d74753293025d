"""Plain reference of the DynamicResources filter over node-local devices: node by node, device by device.

Written from the rules (docs/semantics.md, "Dynamic Resource Allocation"), independent of the kernel:

* a node not hosting every already-allocated claim of the pod fails with "resourceclaim not available on the
  node" (payload 1);
* otherwise the requests to allocate are taken in order; an ExactCount request takes the first `count` free
  matching devices of the node (device order) not taken by an earlier request; an All request takes every
  matching device of the node and needs at least one, all of them free and not taken; a request that cannot
  be satisfied fails the node with "cannot allocate all claims" (payload 2);
* the devices a passing node assigns are reported as (slot -> request index).
"""
from __future__ import annotations


def dra_filter(node_devices: list[list[int]], allocated: list[bool], requests: list[dict], pinned: list[int]):
    """node_devices[n]: device ids of node n in order; requests: {"matches": set of device ids, "count": int,
    "all": bool}; pinned: node of each allocated claim. Returns per node (code, payload, {device: request})."""
    out = []
    for n, devices in enumerate(node_devices):
        if any(p != n for p in pinned):
            out.append((2, 1, {}))
            continue
        taken: dict[int, int] = {}
        ok = True
        for q, req in enumerate(requests):
            matching = [d for d in devices if d in req["matches"]]
            if req["all"]:
                if not matching or any(allocated[d] or d in taken for d in matching):
                    ok = False
                    break
                for d in matching:
                    taken[d] = q
            else:
                got = 0
                for d in matching:
                    if got == req["count"]:
                        break
                    if not allocated[d] and d not in taken:
                        taken[d] = q
                        got += 1
                if got < req["count"]:
                    ok = False
                    break
        out.append((0, 0, taken) if ok else (2, 2, {}))
    return out
