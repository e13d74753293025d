"""NodeAffinity: Filter on spec.nodeSelector plus required node affinity (and the profile's addedAffinity),
Score on preferred terms, normalized. Upstream: plugins/nodeaffinity/node_affinity.go,
component-helpers/scheduling/corev1/nodeaffinity.

PreFilter narrows the nodes when every required term names nodes (matchFields metadata.name In: upstream's
PreFilterResult) and rejects the pod outright when those names intersect to nothing ("pod affinity terms
conflict"). A preferred term that does not parse fails PreScore (only run with two or more feasible nodes).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import model_validator

from ..cluster_models.objects import (NodeAffinity as NodeAffinitySpec, go_quote, label_key_problem,
                                      label_value_errors, label_value_problem,
                                      qualified_name_errors)
from ..cluster_models.tensors import parse_int64_label
from ..kernels.node_affinity import (ENFORCED_MISMATCH_BIT, NameTest, node_affinity_filter, node_affinity_score,
                                     term_matches)
from ..kernels.normalize import default_normalize, max_holders
from .framework import (FIXED, NODE_ADDED, NODE_UPDATED, NOT_RUN, SKIP, ArgsInvalid, CycleError, NodeSubset, Pads,
                        Plugin, PluginArgs, Rejection, pad1)
from .labels import label_test

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
CONFLICT = "pod affinity terms conflict"
NAME_FIELD = "metadata.name"


class NodeAffinityArgs(PluginArgs):
    added_affinity: NodeAffinitySpec | None = None

    @model_validator(mode="after")
    def _validate(self):
        """ValidateNodeAffinityArgs: addedAffinity's required terms parsed as nodeaffinity.NewNodeSelector and its
        preferred terms as NewPreferredSchedulingTerms parse them (empty terms and weight-0 preferred terms are
        skipped), every parse error under its path, aggregated."""
        affinity = self.added_affinity
        if affinity is None:
            return self
        errors = []
        if (required := affinity.required_during_scheduling_ignored_during_execution) is not None:
            path = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            for i, term in enumerate(required.node_selector_terms):
                errors += _term_parse_errors(term, f"{path}[{i}]")
        path = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(affinity.preferred_during_scheduling_ignored_during_execution):
            if term.weight != 0:        # upstream's path has no ".preference"
                errors += _term_parse_errors(term.preference, f"{path}[{i}]")
        if errors:
            raise ArgsInvalid(errors)
        return self


def _go_strings(values: list[str]) -> str:
    """A []string as field.Error shows it (%#v)."""
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}" if values else "[]string(nil)"


def _term_parse_errors(term, path: str) -> list[str]:
    """newNodeSelectorTerm's parse errors: matchExpressions as labels.NewRequirement checks them (key, values per
    operator, each value a label value), matchFields with In / NotIn and exactly one value."""
    errors = []
    for j, r in enumerate(term.match_expressions):
        at = f"{path}.matchExpressions[{j}]"
        if key_errors := qualified_name_errors(r.key):
            errors.append(f"{at}.key: Invalid value: {go_quote(r.key)}: {'; '.join(key_errors)}")
        if r.operator in ("In", "NotIn") and not r.values:
            errors.append(f"{at}.values: Invalid value: {_go_strings(r.values)}: for 'in', 'notin' operators, "
                          "values set can't be empty")
        elif r.operator in ("Exists", "DoesNotExist") and r.values:
            errors.append(f"{at}.values: Invalid value: {_go_strings(r.values)}: values set must be empty for "
                          "exists and does not exist")
        elif r.operator in ("Gt", "Lt") and len(r.values) != 1:
            errors.append(f"{at}.values: Invalid value: {_go_strings(r.values)}: for 'Gt', 'Lt' operators, "
                          "exactly one value is required")
        errors += _value_errors(r, at)
    for j, r in enumerate(term.match_fields):
        at = f"{path}.matchFields[{j}]"
        if r.operator not in ("In", "NotIn"):
            errors.append(f'{at}.operator: Unsupported value: "{r.operator}": supported values: "In", "NotIn"')
        elif len(r.values) != 1:
            errors.append(f"{at}.values: Invalid value: {_go_strings(r.values)}: must have one element")
    return errors


@dataclass(frozen=True)
class FilterState:
    required: tuple | None      # the pod's nodeSelector AND each required term (terms ORed); None: no constraint
    enforced: tuple | None      # addedAffinity's required terms; None: none


def _term(term, vocab, node_index, n_nodes) -> tuple | None:
    """A NodeSelectorTerm as tests; None when it can never match (empty, or a requirement fails to parse: as
    labels.NewRequirement, also a requirement whose key is not a label key or one of whose values is not a label
    value, e.g. `Gt ["-1"]`, `NotIn ["a b"]`)."""
    if not term.match_expressions and not term.match_fields:
        return None
    if any(label_key_problem(r.key) is not None or any(label_value_problem(v) is not None for v in r.values)
           for r in term.match_expressions):
        return None
    tests = [label_test(vocab, r.key, r.operator, r.values) for r in term.match_expressions]
    for r in term.match_fields:
        tests.append(_name_test(node_index, n_nodes, r.operator, r.values) if r.key == NAME_FIELD else None)
    return None if any(t is None for t in tests) else tuple(tests)


def _name_test(node_index: dict[str, int], n_nodes: int, op: str, values: list[str]) -> NameTest | None:
    if op not in ("In", "NotIn"):
        return None
    allowed = np.zeros(n_nodes, bool)
    allowed[[node_index[v] for v in values if v in node_index]] = True
    return NameTest(~allowed if op == "NotIn" else allowed)


def _required_terms(selector, tensors, prefix=()) -> tuple:
    return tuple(prefix + t for t in (_term(term, tensors.node_labels, tensors.node_index, tensors.nodes.size)
                                      for term in selector.node_selector_terms) if t is not None)


def label_only_terms(selector, vocab) -> tuple:
    """A NodeSelector matched against a node's labels alone, as volume.CheckNodeAffinity matches a volume's node
    affinity: its Node has labels and no name, and a term's matchFields are not read against a node without fields
    (nodeSelectorTerm.match)."""
    terms = []
    for term in selector.node_selector_terms:
        tests = _term(term, vocab, {}, 0)
        if tests is not None:
            terms.append(tuple(t for t in tests if not isinstance(t, NameTest)))
    return tuple(terms)


def _named_nodes(terms, node_index: dict[str, int], n_nodes: int) -> tuple[np.ndarray, frozenset[str]] | None:
    """PreFilterResult: when every required term names nodes (matchFields metadata.name In), only the union of the
    per-term intersections can match: (mask, names; no names: upstream's "pod affinity terms conflict"), or None when
    some term does not narrow the nodes."""
    if not terms:
        return None
    named: set[str] = set()
    for term in terms:
        names = None
        for r in term.match_fields:
            if r.key == NAME_FIELD and r.operator == "In":
                names = set(r.values) if names is None else names & set(r.values)
        if names is None:
            return None
        named |= names
    union = np.zeros(n_nodes, bool)
    union[[node_index[v] for v in named if v in node_index]] = True
    return union, frozenset(named)


def _value_errors(r, path: str) -> list[str]:
    """labels.NewRequirement's field errors on a requirement's values (its key and operator, and the number of its
    values, are API-validated at input): Gt/Lt values that strconv.ParseInt refuses, then values that are not label
    values."""
    out = []
    if r.operator in ("Gt", "Lt"):
        out += [f"{path}.values[{i}]: Invalid value: {go_quote(v)}: for 'Gt', 'Lt' operators, the value must be an "
                f"integer" for i, v in enumerate(r.values) if parse_int64_label(v) is None]
    for i, v in enumerate(r.values):
        errors = label_value_errors(v)
        if errors:
            out.append(f"{path}.values[{i}][{r.key}]: Invalid value: {go_quote(v)}: {'; '.join(errors)}")
    return out


def _preferred(preferred, tensors) -> tuple[tuple, str | None]:
    """(weight, term) of the preferred terms, and NewPreferredSchedulingTerms' error when one does not parse: every
    field error of every term (paths `[i].matchExpressions[j].values[k]`), one alone or `[e1, e2, ...]`."""
    out, errors = [], []
    for i, p in enumerate(preferred):
        if not p.weight or not (p.preference.match_expressions or p.preference.match_fields):
            continue                     # skipped without being parsed, as upstream does
        errors += [e for j, r in enumerate(p.preference.match_expressions)
                   for e in _value_errors(r, f"[{i}].matchExpressions[{j}]")]
        term = _term(p.preference, tensors.node_labels, tensors.node_index, tensors.nodes.size)
        if term is not None:
            out.append((p.weight, term))
    if not errors:
        return tuple(out), None
    return tuple(out), errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


def _with_name_masks(term: tuple, mask_of) -> tuple:
    """The term with each node-name mask replaced by mask_of(mask)."""
    return tuple(NameTest(mask_of(t.allowed)) if isinstance(t, NameTest) else t for t in term)


def _pad_term(term, n_pad: int) -> tuple:
    return _with_name_masks(term, lambda allowed: pad1(allowed, n_pad, False))


def pad_terms(terms: tuple | None, n_pad: int) -> tuple | None:
    """Required terms with their node-name masks padded (JAX backend)."""
    return None if terms is None else tuple(_pad_term(t, n_pad) for t in terms)


def _terms_on_rows(terms: tuple | None, rows: np.ndarray) -> tuple | None:
    """Required terms with their node-name masks taken at `rows` (a view of some node rows)."""
    return None if terms is None else tuple(_with_name_masks(t, lambda allowed: allowed[rows]) for t in terms)


def _node_matches(terms: tuple, tensors, node) -> bool:
    """Whether a Node object matches terms made over the tensors' vocabularies (ORed; each test of a term must
    hold): its labels and name looked up there, where every node read has put them (an old version's too)."""
    vocab = tensors.node_labels
    row = np.full((1, len(vocab.keys.items)), -1, np.int64)
    for key, value in node.metadata.labels.items():
        k = vocab.keys.ids.get(key)
        if k is not None:
            row[0, k] = vocab.value_id(k, value)
    node_id = tensors.node_index[node.metadata.name]
    return any(bool(term_matches(np, row, _with_name_masks(term, lambda allowed: allowed[[node_id]]))[0])
               for term in terms)


def _unparsed_terms(pod) -> bool:
    """Whether a required node affinity term that is not empty fails to parse (LazyErrorNodeSelector.Match then
    errs when no term matches)."""
    na = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    required = na.required_during_scheduling_ignored_during_execution if na is not None else None
    return required is not None and any(_term_parse_errors(term, "") for term in required.node_selector_terms
                                        if term.match_expressions or term.match_fields)


def required_node_affinity(pod, tensors) -> tuple | None:
    """The pod's nodeSelector AND each required node affinity term, as tests (terms ORed); None when the pod has
    neither (GetRequiredNodeAffinity: also what PodTopologySpread's nodeAffinityPolicy reads)."""
    spec = pod.spec
    na = spec.affinity.node_affinity if spec.affinity else None
    selector = tuple(label_test(tensors.node_labels, k, "In", [v]) for k, v in spec.node_selector.items())
    if na is not None and na.required_during_scheduling_ignored_during_execution is not None:
        return _required_terms(na.required_during_scheduling_ignored_during_execution, tensors, selector)
    return (selector,) if selector else None


class NodeAffinity(Plugin):
    name = "NodeAffinity"
    reads_requests = False
    Args = NodeAffinityArgs
    events = frozenset({NODE_ADDED, NODE_UPDATED})

    def _enforced(self, tensors) -> tuple | None:
        added = self.args.added_affinity
        if added is None or added.required_during_scheduling_ignored_during_execution is None:
            return None
        return _required_terms(added.required_during_scheduling_ignored_during_execution, tensors)

    def pre_filter(self, pod, cluster):
        tensors = cluster.tensors
        spec = pod.pod.spec
        na = spec.affinity.node_affinity if spec.affinity else None
        required = na.required_during_scheduling_ignored_during_execution if na is not None else None
        state = FilterState(required_node_affinity(pod.pod, tensors), self._enforced(tensors))
        if state.required is None and state.enforced is None:
            return SKIP
        if required is None:
            return state
        named = _named_nodes(required.node_selector_terms, tensors.node_index, tensors.nodes.size)
        if named is None:
            return state
        if not named[1]:
            return Rejection(CONFLICT)
        return NodeSubset(named[0], state, named[1])

    def filter_state(self, pod, cluster, pre):
        if pre is NOT_RUN:      # upstream computes the required affinity in Filter when PreFilter is disabled
            return FilterState(required_node_affinity(pod.pod, cluster.tensors), self._enforced(cluster.tensors))
        return pre

    def removal_behaviour(self, state):
        return FIXED         # reads the node, not its pods

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterNodeChange (v1.36): the node (added, or updated from one that did not) matches the
        profile's addedAffinity and the pod's nodeSelector and required node affinity. Upstream queues the pod when
        the pod's terms fail to parse and none matches."""
        if objects is None:
            return True
        old, new = (None, objects) if event == NODE_ADDED else objects
        tensors = cluster.tensors
        enforced = self._enforced(tensors)
        if enforced is not None and not _node_matches(enforced, tensors, new):
            return False
        required = required_node_affinity(pod, tensors)
        if required is not None and not _node_matches(required, tensors, new):
            return _unparsed_terms(pod)
        return old is None or (required is not None and not _node_matches(required, tensors, old))

    def filter(self, xp, state, tensors):
        required, enforced, rows = state.required, state.enforced, tensors.node_rows
        if rows is not None:     # the node-name masks are over every node; the view holds some rows
            required, enforced = _terms_on_rows(required, rows), _terms_on_rows(enforced, rows)
        return node_affinity_filter(xp, tensors.nodes.labels, required, enforced)

    def reasons(self, payload, tensors):
        return [REASON_ENFORCED if payload == ENFORCED_MISMATCH_BIT else REASON_POD]

    def _score_terms(self, pod, tensors):
        spec = pod.spec
        na = spec.affinity.node_affinity if spec.affinity else None
        own, error = (_preferred(na.preferred_during_scheduling_ignored_during_execution, tensors)
                      if na is not None else ((), None))
        added = self.args.added_affinity
        extra = _preferred(added.preferred_during_scheduling_ignored_during_execution, tensors)[0] \
            if added is not None else ()
        return own, extra, error, na is not None and bool(na.preferred_during_scheduling_ignored_during_execution)

    def pre_score(self, pod, cluster):
        own, extra, error, has_own = self._score_terms(pod.pod, cluster.tensors)
        if error is not None:
            return CycleError(error)
        if not has_own and not extra:
            return SKIP
        return extra + own

    def score_state(self, pod, cluster, pre):
        if pre is NOT_RUN:      # upstream parses the preferred terms in Score when PreScore is disabled
            own, extra, error, _ = self._score_terms(pod.pod, cluster.tensors)
            return CycleError(error) if error else extra + own
        return pre

    def score(self, xp, state, tensors, feasible, cache=None):
        return node_affinity_score(xp, tensors.nodes.labels, state)

    def normalize(self, xp, raw, feasible, state, tensors):
        return default_normalize(xp, raw, feasible, reverse=False)

    def normalization_holders(self, xp, raw, feasible, state):
        return [max_holders(xp, raw, feasible)]

    def pad_filter_state(self, state, pads: Pads):
        return FilterState(pad_terms(state.required, pads.nodes), pad_terms(state.enforced, pads.nodes))

    def pad_score_state(self, state, pads: Pads):
        return tuple((w, _pad_term(t, pads.nodes)) for w, t in state)
