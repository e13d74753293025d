"""DefaultPreemption: the pod PostFilter that evicts lower-priority pods so that a pod no node fits can fit.
Upstream (v1.36): pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (PostFilter,
SelectVictimsOnNode, calculateNumCandidates, PodEligibleToPreemptOthers), pkg/scheduler/framework/preemption/
preemption.go (Preempt, findCandidates, DryRunPreemption, SelectCandidate, pickOneNodeForPreemption); args:
pkg/scheduler/apis/config/{types_pluginargs.go,v1/defaults.go,validation/validation_pluginargs.go}.

The victims on each node come from the dry run the scheduler hands in (sched/preemption.py: remove every
lower-priority pod, check the preemptor fits with every Filter, reprieve the most important pods first, PDB-violating
ones before the others); the arithmetic over nodes is kernels/preemption.py. Where upstream is random phalanx is
deterministic (docs/semantics.md, "Preemption"): the candidate nodes are scanned in node order from `offset`, the
scan is sequential (so the early stop is exact), and ties after the last criterion go to the first candidate.
"""
from __future__ import annotations

import bisect

import numpy as np
from pydantic import model_validator

from ..cluster_models.objects import Int32, go_quote
from ..kernels import preemption as kernel
from ..kernels.status import ERROR, SUCCESS, UNSCHEDULABLE
from ..kernels.status import UNSCHEDULABLE_AND_UNRESOLVABLE
from .framework import (ArgsInvalid, FailedCycle, FailedGroupCycle, Plugin, PluginArgs, PostFilterResult, aggregate,
                        fit_error)

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_WAP = "not eligible due to workload aware preemption enabled"
NOT_ELIGIBLE_PLACEMENT = "not eligible due to placement-based pod group scheduling limitation"
GROUP_NOT_FOUND = "pod group for pod not found"
NO_VICTIMS = "No preemption victims found for incoming pod"
NO_GROUP_VICTIMS = "No preemption victims found for incoming preemptor"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIM_NEEDED = "expected at least one victim pod on node {}"
PREFIX = "preemption: "


class DefaultPreemptionArgs(PluginArgs):
    min_candidate_nodes_percentage: Int32 = 10
    min_candidate_nodes_absolute: Int32 = 100

    @model_validator(mode="after")
    def _ranges(self):
        # ValidateDefaultPreemptionArgs: the errors in upstream's order, aggregated as upstream renders them.
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        errors = []
        if not 0 <= pct <= 100:
            errors.append(f"minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]")
        if absolute < 0:
            errors.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            errors += ["minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                       "minCandidateNodesAbsolute",
                       "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                       "minCandidateNodesPercentage"]
        if errors:
            raise ArgsInvalid(errors)
        return self


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"
    Args = DefaultPreemptionArgs
    # PreEnqueue holds a preemptor while its victims are terminating (async preemption); phalanx deletes victims
    # when the preempting cycle ends, so there is nothing to wait for.
    unmodelled_points = ("preEnqueue",)
    _last_potential = (None, None)     # (node statuses, their Unschedulable nodes): _potential's last answer

    def post_filter(self, failed: FailedCycle, cluster) -> PostFilterResult:
        found = self.candidates(failed, every=False)
        if isinstance(found, PostFilterResult):
            return found
        nodes, alike = found
        dry_run = failed.dry_run
        # Candidates that all tie (the usual run of identical nodes) need no criterion gathered.
        best = int(nodes[0] if alike or dry_run.alike(nodes) else nodes[kernel.pick_one(*dry_run.criteria(nodes))])
        return self._success(dry_run, best)

    def candidates(self, failed: FailedCycle, every: bool = True) -> "PostFilterResult | tuple[object, bool]":
        """upstream findCandidates / DryRunPreemption: the candidate nodes (ids) in the order SelectCandidate reads
        them (those violating no PDB first, each list in scan order), and whether they are known to tie on every
        criterion; or the PostFilterResult when the pod is not eligible or no node is a candidate. Each candidate's
        victims and violations are the dry run's (failed.dry_run.victims_of, .criteria). every=False: where all are
        known to tie, the first alone (what PostFilter takes; a run of preemptors copies no list)."""
        pod = failed.pod.pod
        in_group = pod.spec.scheduling_group is not None or pod.spec.workload_ref is not None
        if in_group and self.context.topology_aware_scheduling:
            # v1.36 PostFilter: with TopologyAwareWorkloadScheduling on, a member of a PodGroup with scheduling
            # constraints never preempts pod by pod (each placement would preempt anew), whatever the
            # WorkloadAwarePreemption gate says; its group must exist.
            if failed.pod_group is None:
                return PostFilterResult(UNSCHEDULABLE, PREFIX + GROUP_NOT_FOUND)
            if failed.pod_group.spec.scheduling_constraints is not None:
                return PostFilterResult(UNSCHEDULABLE, PREFIX + NOT_ELIGIBLE_PLACEMENT)
        if in_group and self.context.workload_aware_preemption:
            return PostFilterResult(UNSCHEDULABLE, PREFIX + NOT_ELIGIBLE_WAP)
        if failed.preemption_policy == "Never":
            return PostFilterResult(UNSCHEDULABLE, PREFIX + NOT_ELIGIBLE_NEVER)
        n = len(failed.codes)
        potential = self._potential(failed.codes)
        if len(potential) == 0:
            return self._not_helpful(n, {})
        start = int(np.searchsorted(potential, failed.offset % n))    # the scan wraps around from here
        none_anywhere = self._no_victims_anywhere(failed, potential, start, n)
        if none_anywhere is not None:
            return none_anywhere
        wanted = kernel.num_candidates(len(potential), self.args.min_candidate_nodes_percentage,
                                       self.args.min_candidate_nodes_absolute)
        dry_run = failed.dry_run
        known = dry_run.settled() if len(potential) == n and wanted else None
        if known:
            # Every node is a potential one and the kept results settle the scan: the candidates from the offset
            # on (wrapping around), the stop at the wanted-th of them (or the scan's end), all alike.
            at = bisect.bisect_left(known, failed.offset % n)
            stop = known[(at + wanted - 1) % len(known)] if len(known) >= wanted else (failed.offset - 1) % n
            dry_run.stopped_at(stop)
            at %= len(known)
            taken = min(wanted, len(known)) if every else 1
            return known[at: at + taken] + known[: max(0, at + taken - len(known))], True
        order = np.concatenate([potential[start:], potential[:start]])
        found, scanned, fine, bad, prefix = [], 0, 0, 0, len(order)
        while scanned < len(order):
            missing = max(wanted - min(fine, wanted) - min(bad, wanted), 1)
            take = dry_run.chunk(len(order) - scanned, missing, scanned, fine + bad)
            batch = dry_run.select(order[scanned: scanned + take])
            hits = np.flatnonzero(batch.fits)                   # the candidates, by position in the batch
            violating = batch.violations_at(hits) > 0
            found.append((scanned + hits, violating))
            before = (fine, bad)
            violators = int(np.count_nonzero(violating))
            fine, bad = fine + len(hits) - violators, bad + violators
            if kernel.scan_done(fine, bad, wanted):
                prefix = scanned + kernel.scan_prefix(hits, violating, len(batch.nodes), wanted, *before)
                break
            scanned += len(batch.nodes)
        dry_run.stopped_at(int(order[prefix - 1]))
        # The candidates among the nodes scanned, by position in scan order.
        hits, violating = found[0] if len(found) == 1 else map(np.concatenate, zip(*found))
        within = int(np.searchsorted(hits, prefix))
        if bad:
            hits, violating = hits[:within], violating[:within]
            candidates = np.concatenate([hits[~violating][:wanted], hits[violating][:wanted]])
        else:            # no candidate violates a PDB: the candidates in scan order
            candidates = hits[: min(within, wanted)]
        if len(candidates) == 0:        # the scan went over every potential node
            unneeded = dry_run.unneeded(order)
            if unneeded:
                # DryRunPreemption gives a node the preemptor fits without evicting anyone an Error status, and
                # Preempt returns the errors (aggregated; upstream in the order its workers met them, here in scan
                # order) instead of the FitError; no result, so the pod's nomination stays.
                return PostFilterResult(ERROR, PREFIX + aggregate([NO_VICTIM_NEEDED.format(go_quote(name))
                                                                   for name in unneeded]))
            return self._not_helpful(n, dry_run.failures(order))
        return order[candidates], False

    @staticmethod
    def _no_victims_anywhere(failed: FailedCycle, potential: np.ndarray, start: int, n: int
                             ) -> "PostFilterResult | None":
        """When no pod anywhere may be evicted for the pod (none live of lower priority), the scan's answer without
        the per-node dry runs: every potential node fails with SelectVictimsOnNode's first return, "No preemption
        victims found", so the scan goes round all of them (from potential[start], stopping after the node before
        it). None when some pod may be a victim."""
        dry_run = failed.dry_run
        if len(dry_run.potential[0]):
            return None
        dry_run.stopped_at(int(potential[start - 1]))
        return DefaultPreemption._not_helpful(n, {(NO_VICTIMS,): len(potential)})

    @staticmethod
    def _success(dry_run, node: int) -> PostFilterResult:
        """`node` chosen: the preemptor nominated there, its victims evicted."""
        victims, keys = dry_run.victims_of(node)
        return PostFilterResult(SUCCESS, nominate=dry_run.node_name(node), victims=victims, victim_keys=keys)

    def _potential(self, codes) -> np.ndarray:
        """The nodes whose failure is Unschedulable (not UnschedulableAndUnresolvable). A run of identical preemptors
        hands one cycle's node statuses on while they stand (Placer.place_each), so the last answer is kept with
        the array it was read from (held, so no other array takes its id; statuses are never written in place)."""
        last, potential = self._last_potential
        if codes is not last:
            potential = np.flatnonzero(np.asarray(codes) == UNSCHEDULABLE)
            self._last_potential = (codes, potential)
        return potential

    @staticmethod
    def _not_helpful(n: int, failures: dict[tuple[str, ...], int]) -> PostFilterResult:
        """The FitError of a preemption that found no candidate: each node the dry run tried with its failure
        (`failures`: reasons -> nodes), every other node "Preemption is not helpful for scheduling"; the pod's
        nomination is cleared."""
        hist: dict[str, int] = {}
        for reasons, count in failures.items():
            for reason in reasons:
                hist[reason] = hist.get(reason, 0) + count
        tried = sum(failures.values())
        if n > tried:
            hist[NOT_HELPFUL] = hist.get(NOT_HELPFUL, 0) + n - tried
        return PostFilterResult(UNSCHEDULABLE, PREFIX + fit_error(n, hist), nominate="")

    def pod_group_post_filter(self, failed: FailedGroupCycle, cluster) -> PostFilterResult:
        """Workload-aware preemption (KEP-5710, v1.36): the group is one preemptor and the whole cluster its
        domain. Every victim unit (a PodGroup with disruptionMode PodGroup, else a pod) of lower priority is
        removed and the group's cycle re-run; then the units are given back one at a time, PDB-violating ones
        first, most important first, each kept where the group still schedules without it."""
        if failed.preemption_policy == "Never":
            return PostFilterResult(UNSCHEDULABLE, NOT_ELIGIBLE_NEVER)
        dry_run = failed.dry_run
        units = dry_run.units_below(failed.priority)
        if not units:
            return PostFilterResult(UNSCHEDULABLE_AND_UNRESOLVABLE, NO_GROUP_VICTIMS)
        message = dry_run.schedules_without(units)
        if message:
            return PostFilterResult(UNSCHEDULABLE, message)
        order = kernel.unit_order([u.priority for u in units], [u.is_group for u in units],
                                  [len(u.rows) for u in units], [u.start for u in units], np.arange(len(units)))
        units = [units[i] for i in order.tolist()]
        violating = dry_run.pdb_violating(units)
        reprieve = [units[i] for i in [*np.flatnonzero(violating).tolist(), *np.flatnonzero(~violating).tolist()]]
        # The units still removed, as a mask over the reprieve order (the dry run reads their positions).
        positions, removed, evicted, at = dry_run.index(reprieve), np.ones(len(reprieve), bool), [], 0
        while at < len(reprieve):
            if dry_run.monotone:         # a run of units given back at once, then the one that cannot be
                def fits_without_first(k, start=at):
                    trial = removed.copy()
                    trial[start: start + k] = False
                    return not dry_run.schedules_without_at(positions[trial])
                k = kernel.longest_reprieve(len(reprieve) - at, fits_without_first)
                removed[at: at + k] = False
                at += k
                if at == len(reprieve):
                    break
            trial = removed.copy()
            trial[at] = False
            if dry_run.schedules_without_at(positions[trial]):
                evicted.append(reprieve[at])     # in reprieve order
            else:
                removed = trial
            at += 1
        # Sorted by importance; equally important units keep their reprieve order (Go's insertion sort).
        order = kernel.unit_order([u.priority for u in evicted], [u.is_group for u in evicted],
                                  [len(u.rows) for u in evicted], [u.start for u in evicted], np.arange(len(evicted)))
        bad = {id(units[i]) for i in np.flatnonzero(violating).tolist()}
        return PostFilterResult(SUCCESS, victims=tuple(pod for i in order.tolist() for pod in evicted[i].pods),
                                pdb_violations=sum(1 for u in evicted if id(u) in bad))
