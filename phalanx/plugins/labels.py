"""Label requirements as masks over a label vocabulary (host side, once per pod): a requirement on key k becomes
a (V_k + 1,) bool mask over the values seen for k, its last slot standing for "label absent", so a kernel tests
every node (or bound pod) with one gather. Shared by NodeAffinity (node labels), PodTopologySpread and
InterPodAffinity (pod labels)."""
from __future__ import annotations

import numpy as np

from ..cluster_models.objects import selector_matches  # noqa: F401  (re-exported: plugins match selectors here)
from ..cluster_models.tensors import parse_int64_label
from ..kernels.node_affinity import LabelTest


def label_test(vocab, key: str, op: str, values: list[str]) -> LabelTest | None:
    """One requirement (labels.Requirement.Matches); None when it cannot be parsed (upstream: the term then
    never matches)."""
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


def selector_tests(selector, vocab) -> tuple | None:
    """A metav1.LabelSelector as LabelTests (all must hold): () matches every labels set (an empty selector is
    labels.Everything()); None when the selector is nil (labels.Nothing(): matches nothing)."""
    if selector is None:
        return None
    tests = [label_test(vocab, k, "In", [v]) for k, v in selector.match_labels.items()]
    tests += [label_test(vocab, r.key, r.operator, r.values) for r in selector.match_expressions]
    return None if any(t is None for t in tests) else tuple(tests)
