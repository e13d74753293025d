"""DynamicResources (DRA): pods with resourceClaims get node-local devices; a PodGroup's claims are shared by its
members (KEP-5729). Upstream: pkg/scheduler/framework/plugins/dynamicresources/.

The claim state (which claims exist, which devices they hold, who uses them) is the cluster's ClaimBook
(sched/claims.py, reached through the cluster handle), as upstream keeps it in the DRA manager. PreFilter resolves
the pod's claims into kernel inputs (a missing claim or device class rejects the pod), Filter checks every node at
once (kernels/dynamic_resources.py: allocated claims pin their node, the others are allocated first fit, then a
backtracking search as upstream's allocator where that fails; a prioritized list's subrequests in order), Reserve allocates what the Filter assigned on the
chosen node, Unreserve undoes it exactly. Score (v1.35+, kubernetes#134711) prefers nodes where the allocation took
better-ranked subrequests of prioritized lists, read from the Filter's assignment. A pod asking for extended
resources that a DeviceClass backs (DRAExtendedResource) has one more claim for them, allocated the same way on nodes
that do not advertise them (sched/claims.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import field_validator, model_validator

from ..cluster_models.dra import FIRST_AVAILABLE_MAX_SIZE
from ..cluster_models.durations import duration_from_json, duration_text
from ..kernels.dynamic_resources import REASONS, prioritized_list_score
from ..kernels.normalize import default_normalize
from ..kernels.status import UNSCHEDULABLE
from .framework import (NODE_ADDED, NODE_UPDATED, NOT_RUN, PER_POD, POD_DELETED, SKIP, ArgsInvalid, CycleError,
                        Plugin, PluginArgs, PostFilterResult, Rejection)

# Its two PostFilter answers (results are frozen: shared by every failed cycle, each preemptor of a run has one).
_STILL_NOT_SCHEDULABLE = PostFilterResult(UNSCHEDULABLE, "still not schedulable")
_NO_NEW_CLAIMS = PostFilterResult(UNSCHEDULABLE, "no new claims to deallocate")


# SetDefaults_DynamicResourcesArgs with v1.36's gates: DRASchedulerFilterTimeout (beta, on), DRADeviceBindingConditions
# and DRAResourceClaimDeviceStatus (beta, on).
DEFAULT_FILTER_TIMEOUT_NS = 10 * 10**9
DEFAULT_BINDING_TIMEOUT_NS = 600 * 10**9


class DynamicResourcesArgs(PluginArgs):
    """Decoded, defaulted and validated as upstream's; phalanx's Filter takes no time and binding conditions are not
    modelled, so neither timeout changes a decision."""
    filter_timeout: int = DEFAULT_FILTER_TIMEOUT_NS           # ns
    binding_timeout: int = DEFAULT_BINDING_TIMEOUT_NS         # ns

    @field_validator("filter_timeout", "binding_timeout", mode="before")
    @classmethod
    def _duration(cls, value, info):
        """A metav1.Duration; null is none (defaulted)."""
        if value is None:
            return DEFAULT_FILTER_TIMEOUT_NS if info.field_name == "filter_timeout" else DEFAULT_BINDING_TIMEOUT_NS
        return duration_from_json(value)

    @model_validator(mode="after")
    def _validate(self):
        """ValidateDynamicResourcesArgs with the v1.36 gates on."""
        errors = []
        if self.filter_timeout < 0:
            errors.append(f"filterTimeout: Invalid value: {duration_text(self.filter_timeout)}: must be zero or "
                          f"positive")
        if self.binding_timeout < 10**9:
            errors.append(f"bindingTimeout: Invalid value: {duration_text(self.binding_timeout)}: must be at least 1 "
                          f"second")
        if errors:
            raise ArgsInvalid(errors)
        return self


@dataclass(frozen=True)
class PrioritizedLists:
    """What the Score reads: the pod's Filter state (its assignment is the Filter's, which DraInputs keeps) and what
    each request row adds to a node's raw score where the allocation takes it."""
    inputs: object              # the DraInputs (sched/claims.py)
    points: np.ndarray          # (Q,) int64


class DynamicResources(Plugin):
    name = "DynamicResources"
    Args = DynamicResourcesArgs
    # Its PreEnqueue and PreBind are not modelled, nor PostFilter's deallocation of a claim allocated where the pod
    # cannot go (a pod with claims gets "still not schedulable").
    unmodelled_points = ("preEnqueue", "preBind")
    score_reads_filter = True
    events = frozenset({POD_DELETED, NODE_ADDED, NODE_UPDATED})
    post_filter_reads_nodes = False     # its PostFilter reads the pod's claims only

    def signs(self, spec) -> bool:
        return bool(spec.resource_claims)

    def signature(self, pod):
        # Claims are per pod (which claims, allocated or not), so a pod with claims is a shape of its own, never
        # batched (upstream's DynamicResources makes such pods unsignable too).
        return pod.key if pod.spec.resource_claims else None

    def splits_runs(self, cluster) -> bool:
        return bool(cluster.claims.extended)

    def run_key(self, pod, cluster):
        # Whether an extended resource comes from DRA depends on the DeviceClasses, not on the spec alone: a pod
        # that gets one from DRA has a claim of its own, so it is placed alone (pods with claims have their own
        # signatures above).
        return pod.key if cluster.claims.extended_requests(pod) else None

    def _has_claims(self, pod, cluster) -> bool:
        return bool(pod.spec.resource_claims) or bool(cluster.claims.extended_requests(pod))

    def request_pattern(self, pod, cluster):
        # Requests matter only for extended resources a DeviceClass backs.
        return () if not cluster.claims.extended else None

    def pre_filter(self, pod, cluster):
        if not self._has_claims(pod.pod, cluster):
            return SKIP
        inputs = cluster.claims.prepare(pod.pod, cluster.tensors)
        return Rejection(inputs.message) if inputs.message else inputs

    def filter(self, xp, state, tensors):
        # Copies: a cycle may write into its node statuses, and the Score reads the same allocation again.
        code, payload, assign = (xp.asarray(np.array(a)) for a in state.allocate(xp))
        return code, payload, assign          # the assignment is what Reserve allocates on the chosen node

    def filter_errors(self, state):
        # Where the allocator returns an error (a pool being updated under a request for All devices, a claim asking
        # for more devices than a claim may hold, a selector failing on a device the allocator reaches): the Filter's
        # Error status, which fails the cycle.
        return state.failures

    def reasons(self, payload, tensors):
        return [REASONS[payload]]

    def post_filter(self, failed, cluster):
        # Never Success, so DefaultPreemption runs after it; its reason leads the PostFilter message. Upstream's
        # PreFilter records the pod's claims in the cycle state only when it passes, so after a PreFilter rejection
        # (a missing claim or device class) PostFilter finds no claims: "no new claims to deallocate".
        pod = failed.pod.pod
        if not self._has_claims(pod, cluster):
            return _NO_NEW_CLAIMS
        inputs = cluster.claims.prepare(pod, cluster.tensors)
        if inputs.message is not None:
            return _NO_NEW_CLAIMS
        if inputs.stale:
            # The pod's claim for extended resources from an earlier cycle is deleted (Filter refused it on every
            # node); the pod tries again with a claim of its own. ResourceClaim deletions are not among the
            # plugin's events: the deletion wakes nothing by itself.
            return PostFilterResult(UNSCHEDULABLE, "deletion of ResourceClaim completed",
                                    changes=(lambda c: c.claims.delete_stale(pod),))
        return _STILL_NOT_SCHEDULABLE

    def filter_behaviour(self, state):
        return PER_POD

    def score_state(self, pod, cluster, pre):
        # Upstream's Score reads the claims PreFilter recorded and the allocations Filter made per node.
        if pre is NOT_RUN:
            return CycleError("not found")      # getStateData: the cycle state has no PreFilter entry
        # No claims, or no Filter ran (no node has allocations): 0 on every node.
        if pre is SKIP:
            return SKIP
        inputs = pre
        if inputs.stale or not inputs.pending:
            return SKIP     # every claim allocated already (no allocator ran), or a stale claim (no feasible node)
        if len(inputs.claims) > len(inputs.pending):
            # v1.36.0's computeScore pairs the pod's i-th claim with the i-th allocation made in the cycle, and
            # there is one allocation per claim to allocate: beside an allocated claim it runs out of allocations
            # on every node the Filter passed, and fails (kubernetes#139017, fixed after v1.36.0). Reported only
            # when Score runs (two or more feasible nodes): with node-local devices an allocated claim pins its
            # node unless its allocation holds no device.
            return CycleError(f"number of allocations {len(inputs.pending)} is smaller than number of claims")
        # A subrequest row ("<request>/<subrequest>", upstream's IsSubRequestRef) at rank i of its list adds
        # FirstAvailableDeviceRequestMaxSize - i; a plain request adds nothing.
        points = np.zeros(len(inputs.results), np.int64)
        for rows in inputs.layout.choices:
            for rank, row in enumerate(rows):
                if "/" in inputs.results[row]:
                    points[row] = FIRST_AVAILABLE_MAX_SIZE - rank
        return PrioritizedLists(inputs, points) if points.any() else SKIP

    def score(self, xp, state, tensors, feasible, cache=None):
        assign = state.inputs.allocate(np)[2]
        return xp.asarray(prioritized_list_score(assign, state.points))

    def normalize(self, xp, raw, feasible, state, tensors):
        return default_normalize(xp, raw, feasible, reverse=False)

    def score_behaviour(self, state):
        return PER_POD      # the assignment moves with every device other pods take (such pods go one by one)

    def host_only(self) -> bool:
        return True

    def reserves_for(self, pod, cluster) -> bool:
        return self._has_claims(pod, cluster)

    def reserve(self, state, node, pod, cluster, assignment, picks=()):
        return cluster.claims.allocate(state, node, assignment)

    def unreserve(self, record, cluster):
        cluster.claims.undo(record)

    def release(self, pod_keys, cluster):
        claims = cluster.claims
        for key in pod_keys:
            claims.release(key)

    def replay(self, record, cluster):
        return cluster.claims.replay(record)
