"""Plain reference of the sequential loop for DOMAIN scores (phalanx/kernels/domain_batch.py): every pick recomputes
every candidate's total from scratch, one node at a time, with Go's min-max NormalizeScore (InterPodAffinity)
written out in plain floats. It must not import phalanx."""
from __future__ import annotations


def minmax(raw: int, lo: int, hi: int) -> int:
    """InterPodAffinity's NormalizeScore of one feasible node: float64(100) * (float64(s-min) / float64(max-min))."""
    if hi - lo <= 0:
        return 0
    return int(100.0 * (float(raw - lo) / float(hi - lo)))


def ref_pick_order(totals, cap, rank, k, scores, holders) -> list[int]:
    """totals[c][j], cap[c], rank[c]: lists; scores: [(weight, raw[c], [(domain[c], added weight), ...])];
    holders: [[bool per candidate]]. The picks of the pod-by-pod loop, stopping as domain_pick_order documents."""
    c_count, j_count = len(totals), len(totals[0]) if totals else 0
    used = [0] * c_count
    raws = [list(raw) for _, raw, _ in scores]
    picks = []
    while len(picks) < k:
        alive = [c for c in range(c_count) if used[c] < cap[c]]
        if not alive:
            break
        best, best_total = None, None
        for c in alive:
            total = totals[c][used[c]]
            for (weight, _, _), raw in zip(scores, raws):
                lo, hi = min(raw[a] for a in alive), max(raw[a] for a in alive)
                total += weight * minmax(raw[c], lo, hi)
            if best is None or total > best_total or (total == best_total and rank[c] < rank[best]):
                best, best_total = c, total
        picks.append(best)
        used[best] += 1
        for (_, _, domains), raw in zip(scores, raws):
            for dom, added in domains:
                if dom[best] < 0:
                    continue
                for c in range(c_count):
                    if dom[c] == dom[best]:
                        raw[c] += added
        if used[best] == cap[best]:
            if any(h[best] and not any(h[c] and used[c] < cap[c] for c in range(c_count)) for h in holders):
                break
        elif used[best] == j_count:
            break
    return picks
