"""NodeAffinity: Filter on spec.nodeSelector plus required node affinity, Score on preferred terms.
Upstream: plugins/nodeaffinity/node_affinity.go, component-helpers/scheduling/corev1/nodeaffinity.

The host side (plugins/labels.py, plugins/node_affinity.py) turns every requirement into a mask over the
values seen for its label key, with one extra slot (index -1) for nodes without the label; the kernel is then a
gather per requirement.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE

POD_MISMATCH_BIT = 1         # the node does not match the pod's nodeSelector / required node affinity
ENFORCED_MISMATCH_BIT = 2    # the node does not match the profile's addedAffinity


@dataclass(frozen=True)
class LabelTest:
    key: int                 # label key id, -1 when no node has the key
    allowed: np.ndarray      # (V_key + 1,) bool; last slot: node without the label


@dataclass(frozen=True)
class NameTest:
    allowed: np.ndarray      # (N,) bool over node ids (matchFields metadata.name)


Term = tuple  # tuple[LabelTest | NameTest, ...]; an empty tuple never matches


def term_matches(xp, labels, term: Term):
    """(N,) bool: every test of the term holds (labels: (N, K) value ids per key, -1 absent)."""
    match = xp.ones((labels.shape[0],), dtype=bool)
    for test in term:
        if isinstance(test, NameTest):
            match = match & xp.asarray(test.allowed)
        elif test.key < 0 or test.key >= labels.shape[1]:
            match = match & test.allowed[-1]
        else:
            match = match & xp.asarray(test.allowed)[labels[:, test.key]]
    return match


def node_affinity_filter(xp, labels, required: tuple[Term, ...] | None, enforced: tuple[Term, ...] | None = None):
    """required: the pod's terms (ORed; None: no constraint); enforced: the profile's addedAffinity terms, checked
    first. Payload: ENFORCED_MISMATCH_BIT or POD_MISMATCH_BIT."""
    n = labels.shape[0]
    payload = xp.zeros((n,), dtype=xp.int64)
    for terms, bit in ((required, POD_MISMATCH_BIT), (enforced, ENFORCED_MISMATCH_BIT)):
        if terms is None:
            continue
        ok = xp.zeros((n,), dtype=bool)
        for term in terms:
            ok = ok | term_matches(xp, labels, term)
        payload = xp.where(ok, payload, bit)
    return xp.where(payload == 0, SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE).astype(xp.int8), payload


def node_affinity_score(xp, labels, preferred):
    """Raw score: sum of the weights of the preferred terms the node matches."""
    score = xp.zeros((labels.shape[0],), dtype=xp.int64)
    for weight, term in preferred:
        score = score + xp.where(term_matches(xp, labels, term), weight, 0)
    return score
