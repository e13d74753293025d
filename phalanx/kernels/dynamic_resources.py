"""DynamicResources (DRA) Filter over node-local devices: allocated claims pin the node, the others are allocated per
node, request by request, in device order, searching as upstream's structured allocator does.

Upstream's Filter (pkg/scheduler/framework/plugins/dynamicresources) first checks the pod's claims that are
already allocated (or allocated earlier in the same PodGroup cycle): a node outside an allocation's node
selector fails with "resourceclaim not available on the node". Then the structured allocator tries to allocate
the remaining claims on the node; fewer results than claims fails with "cannot allocate all claims". Both are
UnschedulableAndUnresolvable. The requests are taken in order (claims in pod order, requests in claim order),
devices in the node's device order. A request with a prioritized list (firstAvailable) is satisfied by the first of
its subrequests that can be, in list order: the allocator tries the first, and only when no allocation of it leaves
the later requests satisfiable does it backtrack into the next (`RequestLayout` groups the flat (sub)request rows).
A subrequest that would take its claim past AllocationResultsMaxSize (32) devices is passed over. A claim's
matchAttribute constraints (`MatchConstraint`) are checked as devices are taken: the first device taken for a row a
constraint covers fixes the attribute's value, a later one must have the same, and one lacking the attribute is never
taken for such a row; the search backtracks past a device that breaks one.

The kernel gives each request the first alternative whose first free matching devices fit (first fit, all nodes at
once); where that fails on a node the allocated claims allow, `dynamic_resources_search` (host side, node by node)
searches the way upstream's allocator backtracks (k8s.io/dynamic-resource-allocation/structured: alternative by
alternative, device by device, undoing a choice when the later requests cannot be satisfied). Its answer is the
first assignment in upstream's search order, which is first fit whenever first fit succeeds (each request then took
the earliest alternative and the earliest devices that could be taken at all). First fit ignores constraints: a node
where its assignment breaks one is searched too (an assignment that keeps them is still the first in upstream's
order, as constraints only remove assignments). The allocation returned for the chosen node is exactly what the
filter checked. Where upstream's allocator returns an error the node's code is
ERROR (the caller's errors, some found by `first_error`, which replays the allocator's walk device by device: a
selector failing on a device, or a device of a request for All devices that a constraint refuses).
"""
from __future__ import annotations

from dataclasses import dataclass

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
ALLOCATION_RESULTS_MAX_SIZE = 32      # resource.k8s.io AllocationResultsMaxSize: devices one claim may hold


@dataclass(frozen=True)
class RequestLayout:
    """How the flat request rows of the claims to allocate form claim requests (static: the kernels loop over it).
    Rows are in the allocator's order (claims, their requests, a request's subrequests); a request is one row
    (`exactly`) or its subrequests' rows in firstAvailable order, of which exactly one is allocated."""
    choices: tuple[tuple[int, ...], ...]    # per request, its rows in the order they are tried
    claim: tuple[int, ...]                  # per request, its claim's position among the claims to allocate

    @classmethod
    def plain(cls, rows: int) -> RequestLayout:
        """Every row a request of its own claim (no prioritized lists)."""
        return cls(tuple((q,) for q in range(rows)), tuple(range(rows)))

    def starts_claim(self, g: int) -> bool:
        """Request g is its claim's first: the claim's device count starts again from zero there."""
        return g == 0 or self.claim[g] != self.claim[g - 1]

    def after(self, g: int) -> int:
        """The first row of the requests after request g."""
        return self.choices[g][-1] + 1


@dataclass(frozen=True)
class MatchConstraint:
    """A claim's matchAttribute constraint over the request rows to allocate (upstream's matchAttributeConstraint)."""
    rows: frozenset[int]       # the rows whose devices it covers (its claim's requests it names, or all of them)
    codes: np.ndarray          # (D + 1,) int64 each device's value of the attribute as a code, -1 lacking it


def _admit(constraints: tuple[MatchConstraint, ...], fixed: tuple[int, ...], q: int, devices) -> tuple[int, ...] | None:
    """The constraints' fixed values (-1: none yet) once `devices` join row q, one by one, or None when a device lacks
    the attribute or differs from the value fixed (upstream's add returns false)."""
    out = list(fixed)
    for c, constraint in enumerate(constraints):
        if q not in constraint.rows:
            continue
        for d in devices:
            code = int(constraint.codes[d])
            if code < 0 or (out[c] >= 0 and code != out[c]):
                return None
            out[c] = code
    return tuple(out)


def _breaks(constraints: tuple[MatchConstraint, ...], slots: np.ndarray, assign: np.ndarray) -> np.ndarray:
    """(N,) bool nodes where an assignment (request row per slot) breaks a constraint: a covered device lacks the
    attribute, or covered devices differ in it."""
    bad = np.zeros(slots.shape[0], bool)
    idx = np.where(slots >= 0, slots, 0)
    for constraint in constraints:
        covered = np.isin(assign, list(constraint.rows))
        codes = constraint.codes[idx]
        high = np.where(covered, codes, -1).max(axis=1, initial=-1)
        low = np.where(covered, codes, np.iinfo(np.int64).max).min(axis=1, initial=np.iinfo(np.int64).max)
        bad |= (covered & (codes < 0)).any(axis=1) | (covered.any(axis=1) & (high != low))
    return bad


def dynamic_resources_filter(xp, slots, allocated, matches, counts, all_mode, pinned, layout: RequestLayout | None = None):
    """Per-node status, reason payload and the allocation the filter found.

    slots:     (N, S) int64 device ids per node in device order, -1 padding
    allocated: (D,) bool   devices already allocated (committed or pending); D >= 1 (callers pad)
    matches:   (Q, D) bool devices each request row to allocate may take (class and request selectors)
    counts:    (Q,) or (N, Q) int64 devices each ExactCount row needs (per node: a request for an extended
               resource asks for none where the device plugin serves it)
    all_mode:  (Q,) bool   allocationMode All: every matching device of the node, at least one, all free
    pinned:    (K,) int64  node of each already-allocated claim of the pod (-1: its node left the cluster)
    layout:    the rows' requests (None: every row a request of its own claim)
    returns code (N,) int64, payload (N,) int64, assign (N, S) int64 (request row per slot, -1 none)
    """
    layout = layout or RequestLayout.plain(matches.shape[0])
    n = slots.shape[0]
    counts = xp.broadcast_to(counts, (n, matches.shape[0]))
    allowed = xp.all(xp.arange(n, dtype=xp.int64)[:, None] == pinned[None, :], axis=1)
    valid = slots >= 0
    idx = xp.where(valid, slots, 0)
    free = valid & ~allocated[idx]
    taken = valid & False
    assign = xp.full(slots.shape, -1, dtype=xp.int64)
    ok = xp.ones((n,), dtype=bool)
    held = xp.zeros((n,), dtype=xp.int64)            # devices of the current claim taken so far (ExactCount rows)
    for g, rows in enumerate(layout.choices):          # requests in order (a static structure), first fit
        if layout.starts_claim(g):
            held = xp.zeros((n,), dtype=xp.int64)
        chosen = xp.zeros((n,), dtype=bool)          # a row of this request was taken on the node
        for q in rows:                                 # its alternatives in order: the first that fits
            m = valid & matches[q][idx]
            avail = m & free & ~taken
            rank = xp.cumsum(avail.astype(xp.int64), axis=1)
            exact_pick = avail & (rank <= counts[:, q][:, None])
            exact_ok = rank[:, -1] >= counts[:, q]
            all_ok = xp.all(~m | (free & ~taken), axis=1) & xp.any(m, axis=1)
            # An All row's devices do not count toward the claim limit in phalanx (docs/semantics.md).
            need = xp.where(all_mode[q], 0, counts[:, q])
            fits = xp.where(all_mode[q], all_ok, exact_ok) & ~chosen & (held + need <= ALLOCATION_RESULTS_MAX_SIZE)
            pick = xp.where(all_mode[q], m, exact_pick) & fits[:, None]
            assign = xp.where(pick, q, assign)
            taken = taken | pick
            held = xp.where(fits, held + need, held)
            chosen = chosen | fits
        ok = ok & chosen
    code = xp.where(allowed & ok, SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE).astype(xp.int64)
    payload = xp.where(~allowed, NOT_AVAILABLE_BIT, xp.where(ok, 0, CANNOT_ALLOCATE_BIT)).astype(xp.int64)
    return code, payload, assign


@dataclass(frozen=True)
class _NodeSearch:
    """Upstream's search for one node: its devices in walk order, what each row may take, how much it needs, the
    claims' constraints."""
    devices: list[int]
    free: np.ndarray           # (D,) bool not allocated
    matches: np.ndarray        # (Q, D) bool
    counts: list[int]          # per row, devices an ExactCount row needs on this node
    all_mode: list[bool]
    layout: RequestLayout
    constraints: tuple[MatchConstraint, ...] = ()

    def first(self, g: int = 0, taken: dict[int, int] | None = None, held: int = 0,
              fixed: tuple[int, ...] | None = None) -> dict[int, int] | None:
        """The first assignment of requests g.. (device -> row) in upstream's search order, or None: the
        request's alternatives in order, each with every choice of its devices before the next alternative.

        Upstream's allocator tries devices one by one, in device order, backtracking on failure; without claim
        constraints a request's devices are interchangeable in order, so its first solution takes, request by
        request, the lexicographically first set of devices that leaves the later requests satisfiable. Devices
        that match the same later rows are interchangeable for those requests, so only the set that takes the
        earliest devices of each such kind is tried for each mix of kinds (any other set with the same mix succeeds
        or fails with it, and comes later in upstream's order). A matchAttribute constraint holds for a set whatever
        order its devices are taken in, so the first set in upstream's order that keeps the constraints (`fixed`:
        each one's value, -1 none yet) is still the first sorted one; devices with different values of a
        constraint's attribute are of different kinds. An alternative that would take the claim past the claim limit
        is passed over (upstream: errAllocationResultMaxSizeExceeded, then the next subrequest)."""
        taken = {} if taken is None else taken
        fixed = (-1,) * len(self.constraints) if fixed is None else fixed
        if g == len(self.layout.choices):
            return dict(taken)
        held = 0 if self.layout.starts_claim(g) else held
        for q in self.layout.choices[g]:
            found = self._fill(g, q, taken, held, fixed)
            if found is not None:
                return found
        return None

    def _fill(self, g: int, q: int, taken: dict[int, int], held: int, fixed: tuple[int, ...]) -> dict[int, int] | None:
        matches, free = self.matches, self.free
        usable = [d for d in self.devices if matches[q, d] and free[d] and d not in taken]
        if self.all_mode[q]:
            matching = [d for d in self.devices if matches[q, d]]
            if not matching or len(usable) != len(matching):
                return None
            # A constraint refusing one of them is an allocator error (first_error finds it); no assignment here.
            after = _admit(self.constraints, fixed, q, matching)
            return None if after is None else self.first(g + 1, {**taken, **{d: q for d in matching}}, held, after)
        need = self.counts[q]
        if len(usable) < need or held + need > ALLOCATION_RESULTS_MAX_SIZE:
            return None
        later = self.layout.after(g)
        kinds: dict[tuple, list[int]] = {}
        for d in usable:
            kind = (*matches[later:, d].tolist(), *(int(c.codes[d]) for c in self.constraints))
            kinds.setdefault(kind, []).append(d)
        groups = list(kinds.values())
        candidates = []
        position = {d: i for i, d in enumerate(self.devices)}

        def mixes(i: int, left: int, chosen: list[int]) -> None:
            if i == len(groups):
                if left == 0:
                    candidates.append(sorted(chosen, key=position.__getitem__))
                return
            for k in range(min(left, len(groups[i])), -1, -1):
                mixes(i + 1, left - k, chosen + groups[i][:k])

        mixes(0, need, [])
        for chosen in sorted(candidates, key=lambda c: [position[d] for d in c]):
            after = _admit(self.constraints, fixed, q, chosen)
            if after is None:
                continue
            found = self.first(g + 1, {**taken, **{d: q for d in chosen}}, held + need, after)
            if found is not None:
                return found
        return None


def dynamic_resources_search(slots, allocated, matches, counts, all_mode, code, payload, assign,
                             layout: RequestLayout | None = None, constraints: tuple[MatchConstraint, ...] = ()):
    """The kernel's result (code, payload, assign) completed on the host: every node where first fit could not
    allocate the claims (payload CANNOT_ALLOCATE_BIT), or allocated them breaking a constraint, is searched as
    upstream's allocator backtracks; a node where an assignment exists passes with it. numpy arrays in and out."""
    code, payload, assign = np.array(code), np.array(payload), np.array(assign)
    if constraints:
        broken = (payload == 0) & _breaks(constraints, np.asarray(slots), assign)
        code[broken], payload[broken], assign[broken] = UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_ALLOCATE_BIT, -1
    retry = np.flatnonzero(payload == CANNOT_ALLOCATE_BIT)
    if not retry.size:
        return code, payload, assign
    layout = layout or RequestLayout.plain(np.asarray(matches).shape[0])
    slots, allocated, matches = np.asarray(slots), np.asarray(allocated), np.asarray(matches)
    free = ~allocated
    counts, all_mode = np.broadcast_to(np.asarray(counts), (slots.shape[0], matches.shape[0])), np.asarray(all_mode)
    # Only nodes where each request on its own could be satisfied by one of its rows can have an assignment (most
    # nodes that first fit rejects lack the devices altogether): (N, Q) free matching devices per row.
    valid = slots >= 0
    idx = np.where(valid, slots, 0)
    m = matches[:, idx] & valid[None]                                        # (Q, N, S)
    usable = (m & free[idx][None]).sum(axis=2).T                             # (N, Q)
    alone = np.where(all_mode[None], (usable == m.sum(axis=2).T) & (usable > 0), usable >= counts)
    possible = np.ones(slots.shape[0], bool)
    for rows in layout.choices:
        possible &= alone[:, list(rows)].any(axis=1)
    retry = retry[possible[retry]]
    all_mode = all_mode.tolist()
    for node in retry.tolist():
        row = slots[node]
        search = _NodeSearch([int(d) for d in row if d >= 0], free, matches, counts[node].tolist(), all_mode, layout,
                             constraints)
        found = search.first()
        if found is not None:
            code[node], payload[node] = SUCCESS, 0
            assign[node] = [found.get(int(d), -1) if d >= 0 else -1 for d in row]
    return code, payload, assign


def dynamic_resources_allocate(xp, slots, allocated, matches, counts, all_mode, pinned,
                               layout: RequestLayout | None = None, errors=None, unfit=None, stale: bool = False,
                               constraints: tuple[MatchConstraint, ...] = ()):
    """The DynamicResources Filter: the kernel, then the host search where first fit fails or breaks one of the
    claims' `constraints` (numpy results).
    errors: (N,) int64 nodes where upstream's allocator returns an error (an index into the caller's messages, the
    payload there; -1 none), or None: its Error status stands whatever the devices, even where an allocated claim
    is not available (upstream runs the allocator before it reports that). unfit: (N,) bool nodes that fail first,
    before any claim is looked at (filterExtendedResources: an extended resource the node neither advertises nor
    gets from DRA), or None. stale: the pod's claim for extended resources is one from an earlier cycle, which
    filterExtendedResources refuses on every node before anything else."""
    code, payload, assign = dynamic_resources_filter(xp, slots, allocated, matches, counts, all_mode, pinned, layout)
    code, payload, assign = dynamic_resources_search(slots, allocated, matches, counts, all_mode, code, payload, assign,
                                                     layout, constraints)
    if errors is not None:
        failed = np.asarray(errors) >= 0
        code[failed], payload[failed], assign[failed] = ERROR, np.asarray(errors)[failed], -1
    if unfit is not None:
        unfit = np.asarray(unfit)
        code[unfit], payload[unfit], assign[unfit] = UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_FIT_BIT, -1
    if stale:
        code[:], payload[:], assign[:] = UNSCHEDULABLE_AND_UNRESOLVABLE, STALE_CLAIM_BIT, -1
    return code, payload, assign


def prioritized_list_score(assign: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The DynamicResources Score (v1.35+, upstream's computeScore), numpy (the plugin is host only): per node, the
    sum of `points` over the request rows its allocation took. assign: (N, S) int64 request row per slot, -1 none
    (the Filter's); points: (Q,) int64 per row. A row counts once however many devices it took (upstream collects
    the allocated subrequests' names into a set). Returns (N,) int64."""
    n, q = assign.shape[0], points.shape[0]
    taken = np.zeros((n, q + 1), dtype=bool)
    # -1 (no row) lands in the extra last column, which no point reads.
    taken[np.arange(n)[:, None], assign] = True
    return taken[:, :q].astype(np.int64) @ points


@dataclass(frozen=True)
class WalkError:
    """Where upstream's allocator walk on one node returns an error: row q's selectors fail to evaluate on the
    device, or (constraint) the device, of a row for All devices, cannot join it because a constraint refuses it."""
    row: int
    device: int
    constraint: bool


def first_error(devices: list[int], free: np.ndarray, matches: np.ndarray, failing: np.ndarray, counts: list[int],
                all_mode: list[bool], layout: RequestLayout,
                constraints: tuple[MatchConstraint, ...] = ()) -> WalkError | None:
    """The first error upstream's allocator walk meets on one node, or None when the walk ends (with or without a
    solution) before meeting one.

    devices: the node's devices in walk order (complete pools only); free: (D,) bool not allocated; matches: (Q, D)
    bool devices each row may take; failing: (Q, D) bool the row's selectors fail on the device (no match); counts /
    all_mode per row; layout: the rows' requests; constraints: the claims' matchAttribute constraints. Upstream
    (allocateOne) fills request by request, a request's alternatives in order, device by device: for each device of a
    row it walks the node's devices from the first, skipping those allocated or taken in this search, evaluating the
    selectors of each other one (an error ends the allocation) and taking the first it may that the constraints admit,
    backtracking into the next when the later devices or requests cannot be satisfied. A row for All devices takes
    its matching devices as they are (its selectors were evaluated before the walk), one by one: one allocated or
    taken fails the row, one a constraint refuses ends the allocation with an error (allocateDevice with must). A row
    whose devices would take its claim past the claim limit stops its walk before evaluating anything
    (errAllocationResultMaxSizeExceeded), and so does every row of its claim that it returns through, up to the
    nearest request with alternatives (which tries its next) or the claim's start (where it is a plain failure).
    Evaluations are cached and the walk is deterministic, so a state (row, device index, devices taken, claim count,
    constraint values) walked once is never worth walking again: it meets no new device."""
    done, failed, exceeded = 0, 1, 2
    group = {q: g for g, rows in enumerate(layout.choices) for q in rows}
    seen: dict = {}

    class Met(Exception):
        pass

    def request(g: int, taken: frozenset, held: int, fixed: tuple) -> int:
        if g == len(layout.choices):
            return done
        if layout.starts_claim(g):
            outcome = alternatives(g, taken, 0, fixed)
            return failed if outcome == exceeded else outcome
        return alternatives(g, taken, held, fixed)

    def alternatives(g: int, taken: frozenset, held: int, fixed: tuple) -> int:
        outcomes = []
        for q in layout.choices[g]:
            outcome = fill(q, 0, taken, held, fixed)
            if outcome == done:
                return done
            outcomes.append(outcome)
        return exceeded if all(o == exceeded for o in outcomes) else failed

    def fill(q: int, i: int, taken: frozenset, held: int, fixed: tuple) -> int:
        state = (q, i, taken, held, fixed)
        if state in seen:
            return seen[state]
        if all_mode[q]:
            own = [d for d in devices if matches[q, d]]
            outcome = failed if not own else None
            after = fixed
            for d in own:
                if not free[d] or d in taken:
                    outcome = failed
                    break
                after = _admit(constraints, after, q, (d,))
                if after is None:
                    raise Met(WalkError(q, d, True))
            if outcome is None:
                outcome = request(group[q] + 1, taken | set(own), held, after)
        elif i == counts[q]:
            outcome = request(group[q] + 1, taken, held + counts[q], fixed)
        elif held + counts[q] > ALLOCATION_RESULTS_MAX_SIZE:
            outcome = exceeded
        else:
            outcome = failed
            for d in devices:
                if not free[d] or d in taken:
                    continue
                if failing[q, d]:
                    raise Met(WalkError(q, d, False))
                if not matches[q, d]:
                    continue
                after = _admit(constraints, fixed, q, (d,))
                if after is None:
                    continue
                deeper = fill(q, i + 1, taken | {d}, held, after)
                if deeper != failed:
                    outcome = deeper
                    break
        seen[state] = outcome
        return outcome

    try:
        request(0, frozenset(), 0, (-1,) * len(constraints))
    except Met as met:
        return met.args[0]
    return None
