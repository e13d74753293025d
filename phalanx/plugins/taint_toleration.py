"""TaintToleration: Filter on NoSchedule/NoExecute taints, Score on PreferNoSchedule taints (normalized
reversed). Upstream: plugins/tainttoleration/taint_toleration.go.

Tolerations are matched once per pod against the taint vocabulary (key, value, effect), never per node; the
kernels then read the node table's taint positions."""
from __future__ import annotations

import numpy as np

from ..kernels.normalize import default_normalize, max_holders
from ..kernels.taint_toleration import taint_toleration_filter, taint_toleration_score
from ..kernels.tolerations import tolerated_mask, tolerates
from .framework import FIXED, NODE_ADDED, NODE_UPDATED, Pads, Plugin, pad1

REASON = "node(s) had untolerated taint(s)"          # v1.35+ (no {key: value} any more)
HARD_EFFECTS = ("NoSchedule", "NoExecute")


def _with_effect(taints, effects: tuple[str, ...]) -> np.ndarray:
    """(T,) bool: taints of the vocabulary whose effect is one of `effects` (read-only; kept until new taints)."""
    def make(taints) -> np.ndarray:
        mask = np.array([t[2] in effects for t in taints.items], dtype=bool)
        mask.flags.writeable = False
        return mask
    return taints.derived(("effect", effects), make)


def untolerated_hard(pod, taints, comparison: bool = False) -> np.ndarray:
    """(T,) bool: NoSchedule/NoExecute taints of the vocabulary the pod does not tolerate (also what
    PodTopologySpread's nodeTaintsPolicy reads); `comparison`: Gt/Lt tolerations match."""
    return _with_effect(taints, HARD_EFFECTS) & ~tolerated_mask(pod.spec.tolerations, taints, comparison)


def _untolerated(pod, node, comparison: bool) -> bool:
    """FindMatchingUntoleratedTaint over the node's NoSchedule/NoExecute taints: one the pod does not tolerate."""
    tolerations = pod.spec.tolerations
    return any(taint.effect in HARD_EFFECTS and not any(tolerates(t, taint.key, taint.value, taint.effect, comparison)
                                                        for t in tolerations)
               for taint in node.spec.taints)


class TaintToleration(Plugin):
    name = "TaintToleration"
    reads_requests = False
    events = frozenset({NODE_ADDED, NODE_UPDATED})

    def filter_state(self, pod, cluster, pre):
        return untolerated_hard(pod.pod, cluster.tensors.taints, self.context.toleration_comparison)

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterNodeChange (v1.36): the node (added, or updated from one with an untolerated
        NoSchedule/NoExecute taint) has none now."""
        if objects is None:
            return True
        old, new = (None, objects) if event == NODE_ADDED else objects
        comparison = self.context.toleration_comparison
        return (old is None or _untolerated(pod, old, comparison)) and not _untolerated(pod, new, comparison)

    def removal_behaviour(self, state):
        return FIXED         # reads the node, not its pods

    def filter(self, xp, state, tensors):
        return taint_toleration_filter(xp, tensors.nodes.taints, state)

    def reasons(self, payload, tensors):
        return [REASON]

    def explain_detail(self, payload, tensors):
        key, value, effect = tensors.taints.items[payload]
        return {"taint": f"{key}={value}:{effect}"}     # the node's first untolerated taint, as upstream logs it

    def pre_score(self, pod, cluster):
        """(T,) bool: PreferNoSchedule taints not tolerated by the tolerations with an empty or PreferNoSchedule
        effect (the only ones Score considers)."""
        taints = cluster.tensors.taints
        soft = [t for t in pod.pod.spec.tolerations if t.effect in ("", "PreferNoSchedule")]
        return _with_effect(taints, ("PreferNoSchedule",)) & ~tolerated_mask(soft, taints,
                                                                             self.context.toleration_comparison)

    def score(self, xp, state, tensors, feasible, cache=None):
        return taint_toleration_score(xp, tensors.nodes.taints, state)

    def normalize(self, xp, raw, feasible, state, tensors):
        return default_normalize(xp, raw, feasible, reverse=True)

    def normalization_holders(self, xp, raw, feasible, state):
        return [max_holders(xp, raw, feasible)]

    def pad_filter_state(self, state, pads: Pads):
        return pad1(state, pads.taints, False)

    def pad_score_state(self, state, pads: Pads):
        return pad1(state, pads.taints, False)
