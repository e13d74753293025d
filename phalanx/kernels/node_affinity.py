"""NodeAffinity: Filter on spec.nodeSelector plus required node affinity, Score on preferred terms.
Upstream: plugins/nodeaffinity/node_affinity.go, component-helpers/scheduling/corev1/nodeaffinity.

Host side (pre_filter) turns every requirement into a mask over the values seen for its label key, with
one extra slot (index -1) for nodes without the label; the kernel is then a gather per requirement.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cluster_models.tensors import parse_int64_label
from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE

REASONS = ("node(s) didn't match Pod's node affinity/selector",)
CONFLICT = "pod affinity terms conflict"
NOT_IN_PREFILTER_RESULT = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
NAME_FIELD = "metadata.name"


@dataclass(frozen=True)
class LabelTest:
    key: int                 # label key id, -1 when no node has the key
    allowed: np.ndarray      # (V_key + 1,) bool; last slot: node without the label


@dataclass(frozen=True)
class NameTest:
    allowed: np.ndarray      # (N,) bool over node ids (matchFields metadata.name)


Term = tuple  # tuple[LabelTest | NameTest, ...]; an empty tuple never matches


@dataclass(frozen=True)
class AffinityState:
    required: tuple[Term, ...] | None        # None: no required constraint (plugin skipped)
    preferred: tuple[tuple[int, Term], ...]   # (weight, term)
    candidates: np.ndarray | None = None      # (N,) bool PreFilterResult: nodes named by metadata.name In terms
    conflict: bool = False                    # named node sets all empty: PreFilter rejects the pod outright
    preferred_error: str | None = None        # a preferred term that does not parse fails PreScore upstream


def label_test(vocab, key: str, op: str, values: list[str]) -> LabelTest | None:
    """None when the requirement cannot be parsed (upstream: the term then never matches)."""
    k = vocab.keys.get(key)
    n = len(vocab.values[k]) if k >= 0 else 0
    allowed = np.zeros(n + 1, bool)
    if op in ("In", "NotIn"):
        ids = [vocab.value_id(k, v) for v in values]
        allowed[[i for i in ids if i >= 0]] = True
        if op == "NotIn":
            allowed = ~allowed          # absent label satisfies NotIn
    elif op == "Exists":
        allowed[:n] = True
    elif op == "DoesNotExist":
        allowed[n] = True
    elif op in ("Gt", "Lt"):
        bound = parse_int64_label(values[0]) if len(values) == 1 else None
        if bound is None:
            return None
        if n:
            num, ok = vocab.numeric(k)
            allowed[:n] = ok & ((num > bound) if op == "Gt" else (num < bound))
    else:
        return None
    return LabelTest(k, allowed)


def _name_test(node_index: dict[str, int], n_nodes: int, op: str, values: list[str]) -> NameTest | None:
    if op not in ("In", "NotIn"):
        return None
    allowed = np.zeros(n_nodes, bool)
    allowed[[node_index[v] for v in values if v in node_index]] = True
    return NameTest(~allowed if op == "NotIn" else allowed)


def _term(term, vocab, node_index, n_nodes) -> Term | None:
    """A NodeSelectorTerm as tests; None when it can never match (empty, or a requirement fails to parse)."""
    if not term.match_expressions and not term.match_fields:
        return None
    tests = [label_test(vocab, r.key, r.operator, r.values) for r in term.match_expressions]
    for r in term.match_fields:
        tests.append(_name_test(node_index, n_nodes, r.operator, r.values) if r.key == NAME_FIELD else None)
    return None if any(t is None for t in tests) else tuple(tests)


def pre_filter(pod, vocab, node_index: dict[str, int], n_nodes: int) -> AffinityState:
    spec = pod.spec
    na = spec.affinity.node_affinity if spec.affinity else None
    selector = tuple(label_test(vocab, k, "In", [v]) for k, v in spec.node_selector.items())
    required = None
    if na is not None and na.required_during_scheduling_ignored_during_execution is not None:
        terms = [_term(t, vocab, node_index, n_nodes)
                 for t in na.required_during_scheduling_ignored_during_execution.node_selector_terms]
        required = tuple(selector + t for t in terms if t is not None)
    elif selector:
        required = (selector,)
    candidates, conflict = None, False
    if na is not None and na.required_during_scheduling_ignored_during_execution is not None:
        candidates, conflict = named_nodes(na.required_during_scheduling_ignored_during_execution.node_selector_terms,
                                 node_index, n_nodes)
    preferred, preferred_error = [], None
    for i, p in enumerate(na.preferred_during_scheduling_ignored_during_execution if na else []):
        if not p.weight or not (p.preference.match_expressions or p.preference.match_fields):
            continue                     # NewPreferredSchedulingTerms skips these without parsing them
        term = _term(p.preference, vocab, node_index, n_nodes)
        if term is None:
            preferred_error = preferred_error or (f"preferredDuringSchedulingIgnoredDuringExecution[{i}].preference: "
                                                  f"invalid requirement")
        else:
            preferred.append((p.weight, term))
    return AffinityState(required, tuple(preferred), candidates, conflict, preferred_error)


def named_nodes(terms, node_index: dict[str, int], n_nodes: int) -> tuple[np.ndarray | None, bool]:
    """PreFilterResult: when every required term names nodes (matchFields metadata.name In), only the union of
    the per-term intersections can match. Returns (mask or None when some term does not narrow the nodes,
    whether the named sets are all empty — upstream's "pod affinity terms conflict")."""
    if not terms:
        return None, False
    named: set[str] = set()
    for term in terms:
        names = None
        for r in term.match_fields:
            if r.key == NAME_FIELD and r.operator == "In":
                names = set(r.values) if names is None else names & set(r.values)
        if names is None:
            return None, False
        named |= names
    union = np.zeros(n_nodes, bool)
    union[[node_index[v] for v in named if v in node_index]] = True
    return union, not named


def term_matches(xp, labels, term: Term):
    """(N,) bool: every test of the term holds (labels: (N, K) value ids per key, -1 absent)."""
    match = xp.ones((labels.shape[0],), dtype=bool)
    for test in term:
        if isinstance(test, NameTest):
            match = match & xp.asarray(test.allowed)
        elif test.key < 0 or test.key >= labels.shape[1]:
            match = match & bool(test.allowed[-1])
        else:
            match = match & xp.asarray(test.allowed)[labels[:, test.key]]
    return match


def node_affinity_filter(xp, labels, required: tuple[Term, ...]):
    ok = xp.zeros((labels.shape[0],), dtype=bool)
    for term in required:
        ok = ok | term_matches(xp, labels, term)
    return xp.where(ok, SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE).astype(xp.int8), (~ok).astype(xp.int64)


def node_affinity_score(xp, labels, preferred):
    """Raw score: sum of the weights of the preferred terms the node matches."""
    score = xp.zeros((labels.shape[0],), dtype=xp.int64)
    for weight, term in preferred:
        score = score + xp.where(term_matches(xp, labels, term), weight, 0)
    return score
