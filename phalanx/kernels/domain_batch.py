"""Batching for runs whose scores move on the topology domains of the node that takes a copy (DOMAIN scores, e.g.
InterPodAffinity for pods whose terms select the pod itself), with exactly the decisions of the pod-by-pod loop.

A copy placed on node m adds a fixed weight to the raw score of every node sharing m's value of a label key, and
the score is normalized over the feasible nodes by a function of their minimum and maximum raw score, so every
pick moves what the next one sees: the loop is sequential. It keeps each candidate's select_best key exact and
recomputes only what a pick moved:
- the picked node's FIXED + NODE_LOCAL total for its next copy (a column of the precomputed copy totals);
- per DOMAIN score, the raw scores of the picked node's domains, and the feasible minimum and maximum (kept with
  their multiplicities, so that a pass over the candidates is needed only when the last node at an extreme leaves
  it without a moved node reaching it);
- the normalized scores of the nodes whose raw score moved; when the maximum moved, of every node above the
  minimum (a node at the minimum scales to a value that does not depend on the maximum: Plugin.scale); when the
  minimum moved, of every node.
Then one argmax over the candidates. In the common pile-up (each copy raises its own node, which keeps winning
until it is full; per-node keys such as kubernetes.io/hostname) a pick is scalar work and that argmax.

Host side (numpy), a Python loop over picks. The (C,) arrays are over the candidates: the nodes feasible when the
round started (copies only add load, so no other node becomes feasible during the round).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class DomainScore:
    """One DOMAIN Score plugin over the candidates."""
    weight: int                          # the plugin's weight in the profile
    raw: np.ndarray                      # (C,) int64 raw scores before the run
    domains: tuple                       # ((C,) int64 domain id of each candidate for a label key (-1: the node
                                         # lacks the key), int weight a copy adds to its domain) per key
    scale: Callable                      # (raw (S,) int64, lo, hi) -> (S,) int64 normalized scores


class _Members:
    """The candidates of each domain of one label key."""

    def __init__(self, dom: np.ndarray):
        self.dom = dom
        keyed = dom[dom >= 0]
        self.per_node = len(np.unique(keyed)) == len(keyed)      # every domain is one node (hostname)
        if not self.per_node:
            self.order = np.argsort(dom, kind="stable")
            self.start = np.searchsorted(dom[self.order], np.arange(int(dom.max()) + 2))

    def of(self, c: int) -> np.ndarray | None:
        """The candidates in c's domain (c included), None when c lacks the key."""
        d = int(self.dom[c])
        if d < 0:
            return None
        return None if self.per_node else self.order[self.start[d]:self.start[d + 1]]

    def has(self, c: int) -> bool:
        return self.dom[c] >= 0


class _Scaled:
    """A DOMAIN score over the candidates: raw and weighted normalized scores, the feasible extremes with their
    multiplicities, and the feasible candidates above the minimum (every other feasible one is at it)."""

    def __init__(self, score: DomainScore, alive: np.ndarray):
        self.weight, self.scale = score.weight, score.scale
        self.raw = score.raw.astype(np.int64).copy()
        self.keys = [(_Members(dom), int(w)) for dom, w in score.domains if w]
        self.norm = np.zeros(len(self.raw), np.int64)
        self._memo: dict[tuple[int, int, int], int] = {}       # (raw, lo, hi) -> weighted normalized score
        self.rescale_all(alive)

    def extremes(self, alive: np.ndarray) -> None:
        live = self.raw[alive]
        if not len(live):
            self.lo = self.hi = self.n_lo = self.n_hi = 0
            return
        self.lo, self.hi = int(live.min()), int(live.max())
        self.n_lo, self.n_hi = int((live == self.lo).sum()), int((live == self.hi).sum())

    def rescale_all(self, alive: np.ndarray) -> None:
        self.extremes(alive)
        idx = np.flatnonzero(alive)
        self.norm[idx] = self.weight * self.scale(self.raw[idx], self.lo, self.hi)
        self.above = set(np.flatnonzero(alive & (self.raw != self.lo)).tolist())

    def _scaled(self, v: int) -> int:
        key = (v, self.lo, self.hi)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self.weight * int(self.scale(np.array([v], np.int64), self.lo, self.hi)[0])
        return hit

    def _leave(self, v: int) -> None:
        self.n_lo -= v == self.lo
        self.n_hi -= v == self.hi

    def _enter(self, v: int) -> None:
        # After _leave, an extreme whose last node left (multiplicity 0) is known again only if an entering value
        # reaches or passes it: every other feasible value lies strictly inside.
        if v < self.lo:
            self.lo, self.n_lo = v, 1
        elif v == self.lo:
            self.n_lo += 1
        if v > self.hi:
            self.hi, self.n_hi = v, 1
        elif v == self.hi:
            self.n_hi += 1

    def pick(self, c: int, alive: np.ndarray):
        """The raw scores after a copy on candidate c (`alive`: the candidates still feasible after it). Returns
        the candidates whose normalized score moved: () or (c,) when at most c's did, an index array, or None when
        every candidate's may have (all rescaled)."""
        lo, hi = self.lo, self.hi
        spread = [(members.of(c), w) for members, w in self.keys if members.has(c)]
        if all(m is None for m, _ in spread):                  # per-node keys (or none): only c moves
            old = int(self.raw[c])
            new = old + sum(w for _, w in spread)
            self.raw[c] = new
            self._leave(old)
            if alive[c]:
                self._enter(new)
            touched = None
        else:
            touched = np.unique(np.concatenate([[c]] + [np.array([c]) if m is None else m for m, _ in spread]))
            old = self.raw[touched]
            for m, w in spread:
                self.raw[c if m is None else m] += w
            after = alive[touched]
            for v in old[after | (touched == c)].tolist():   # c was feasible before its copy
                self._leave(v)
            for v in self.raw[touched][after].tolist():
                self._enter(v)
        if self.n_lo <= 0 or self.n_hi <= 0:
            self.extremes(alive)
        if self.lo != lo:
            self.rescale_all(alive)
            return None
        if touched is None:
            if alive[c] and new != self.lo:
                self.above.add(c)
            else:
                self.above.discard(c)
            if self.hi == hi:
                if not alive[c] or new == old:
                    return ()
                self.norm[c] = self._scaled(new)
                return (c,)
            live = [c] if alive[c] else []
        else:
            live = touched[alive[touched]]
            self.above.update(live[self.raw[live] != self.lo].tolist())
            if not alive[c]:
                self.above.discard(c)
            if self.hi == hi:
                self.norm[live] = self.weight * self.scale(self.raw[live], self.lo, self.hi)
                return live
            live = live.tolist()
        redo = np.fromiter(self.above.union(live), np.int64)
        if len(redo) == 1:
            self.norm[redo[0]] = self._scaled(int(self.raw[redo[0]]))
        elif len(redo):
            self.norm[redo] = self.weight * self.scale(self.raw[redo], self.lo, self.hi)
        return redo


def domain_pick_order(totals: np.ndarray, cap: np.ndarray, rank: np.ndarray, n: int, k: int,
                      scores: list[DomainScore], holders: list[np.ndarray]) -> np.ndarray:
    """The candidates the pod-by-pod loop picks for the next pods of a run, in order.

    totals: (C, J) int64 weighted FIXED + NODE_LOCAL total of each candidate's j-th further copy (j = 0: the next
    pod); cap: (C,) copies each candidate takes before a Filter rejects it; rank: (C,) the candidates' tie-break
    ranks among the n nodes (select_best: the highest total, then the lowest rank); k: pods in the run; scores:
    the DOMAIN scores; holders: per FIXED normalization, (C,) bool the candidates holding its extreme (non-empty).

    Up to k picks; the picks stop after one that fills the last candidate, fills the last holder of a FIXED
    normalization (it moves), or takes a candidate's J-th copy (its totals end there)."""
    j_count = totals.shape[1]
    used = np.zeros(totals.shape[0], np.int64)
    alive = cap > 0
    base = totals[:, 0].copy()
    tie = (n - 1 - rank).astype(np.int64)
    scaled = [_Scaled(s, alive) for s in scores]
    holders_left = [int((h & alive).sum()) for h in holders]

    def keyed(idx):
        total = base[idx] + sum(s.norm[idx] for s in scaled)
        return np.where(alive[idx], total * n + tie[idx], -1)

    key = keyed(slice(None))
    picks: list[int] = []
    while len(picks) < k:
        c = int(np.argmax(key))
        if key[c] < 0:
            break
        picks.append(c)
        used[c] += 1
        stop = False
        if used[c] >= cap[c]:
            alive[c] = False
            for i, h in enumerate(holders):
                if h[c]:
                    holders_left[i] -= 1
                    stop = stop or holders_left[i] == 0
        elif used[c] >= j_count:
            stop = True
        else:
            base[c] = totals[c, used[c]]
        moved = [s.pick(c, alive) for s in scaled]
        if any(m is None for m in moved):
            key = keyed(slice(None))
        elif all(isinstance(m, tuple) for m in moved):
            key[c] = (int(base[c]) + sum(int(s.norm[c]) for s in scaled)) * n + int(tie[c]) if alive[c] else -1
        else:
            idx = np.concatenate([[c]] + [np.asarray(m, np.int64) for m in moved])
            key[idx] = keyed(idx)
        if stop:
            break
    return np.array(picks, np.int64)


__all__ = ["DomainScore", "domain_pick_order"]
