"""Batching for runs whose scores move on the topology domains of the node that takes a copy (DOMAIN scores:
InterPodAffinity for pods whose terms select the pod itself, PodTopologySpread's ScheduleAnyway constraints), with
exactly the decisions of the pod-by-pod loop.

A copy placed on node m moves the raw scores of the nodes sharing m's domains, and the score is normalized over the
feasible nodes by a function of their minimum and maximum raw score, so every pick moves what the next one sees:
the loop is sequential. It keeps each candidate's select_best key exact and recomputes only what a pick moved:
- the picked node's FIXED + NODE_LOCAL total for its next copy (a column of the precomputed copy totals);
- per DOMAIN score, the raw scores the copy moved (the plugin's raw-score model: `copy`, and `leave` when the node
  filled), and the feasible minimum and maximum, kept with their multiplicities so that a pass over the candidates
  is needed only when the last node at an extreme leaves it without a moved node reaching it;
- the normalized scores of the nodes whose raw score moved; when the maximum moved, of every node off the minimum
  (a node at the minimum scales to a value that does not depend on the maximum: Plugin.scale); when the minimum
  moved, or the model says every raw score moved, of every node.
Then one argmax over the candidates. When a copy moves only its own node (per-node keys such as
kubernetes.io/hostname: the scheduler_perf pods that pile onto one node until it is full) a pick is scalar work
and that argmax.

Host side (numpy), a Python loop over picks. The (C,) arrays are over the candidates: the nodes feasible when the
round started (copies only add load, so no other node becomes feasible during the round).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


class RawModel:
    """A DOMAIN score's raw scores over the candidates while copies land (what a plugin's copy_model returns)."""
    raw: np.ndarray                       # (C,) int64 raw scores now (one array, updated in place)
    scored: np.ndarray | None             # (C,) bool candidates the normalization reads (None: all); others score 0

    def copy(self, c: int):
        """A copy was placed on candidate c: update `raw`. Returns (c, c's old raw score) when only c's moved,
        (indices (S,), their old raw scores (S,)) when those moved, or None when any may have."""
        raise NotImplementedError

    def leave(self, c: int) -> bool:
        """Candidate c filled (it leaves the feasible set, after its copy): whether every raw score moved."""
        return False


class AddedWeights(RawModel):
    """Raw scores to which a copy adds a fixed weight on every node sharing its node's value of a label key
    (InterPodAffinity: its terms and the pod's select each other)."""

    def __init__(self, raw: np.ndarray, domains: tuple):
        """raw: (C,) int64; domains: ((C,) int64 domain id of each candidate for a key (-1: no key), weight)."""
        self.raw = raw.astype(np.int64).copy()
        self.scored = None
        self._keys = []
        for dom, weight in domains:
            keyed = dom[dom >= 0]
            per_node = len(np.unique(keyed)) == len(keyed)        # every domain is one node (hostname)
            order = None if per_node else np.argsort(dom, kind="stable")
            start = None if per_node else np.searchsorted(dom[order], np.arange(int(dom.max()) + 2))
            self._keys.append((dom, int(weight), order, start))

    def copy(self, c: int):
        single, spread = 0, []
        for dom, weight, order, start in self._keys:
            d = int(dom[c])
            if d < 0:
                continue
            if order is None:
                single += weight
            else:
                spread.append((order[start[d]:start[d + 1]], weight))
        if not spread:
            old = int(self.raw[c])
            self.raw[c] = old + single
            return c, old
        idx = np.unique(np.concatenate([[c]] + [m for m, _ in spread]))
        old = self.raw[idx]
        self.raw[c] += single
        for members, weight in spread:
            self.raw[members] += weight
        return idx, old


@dataclass
class DomainScore:
    """One DOMAIN Score plugin over the candidates."""
    weight: int                          # the plugin's weight in the profile
    model: RawModel                      # its raw scores, moved copy by copy
    scale: Callable                      # (raw (S,) int64, lo, hi) -> (S,) int64 normalized scores


class _Scaled:
    """A DOMAIN score over the candidates: weighted normalized scores, the extremes of the raw scores of the
    feasible candidates the normalization reads (with multiplicities), and those of them off the minimum."""

    def __init__(self, score: DomainScore, alive: np.ndarray):
        self.weight, self.scale, self.model = score.weight, score.scale, score.model
        self.raw = self.model.raw
        n = len(self.raw)
        self.scored = np.ones(n, bool) if self.model.scored is None else self.model.scored
        self.norm = np.zeros(n, np.int64)
        self._memo: dict[tuple[int, int, int], int] = {}       # (raw, lo, hi) -> weighted normalized score
        self.rescale_all(alive)

    def extremes(self, alive: np.ndarray) -> None:
        live = self.raw[alive & self.scored]
        if not len(live):
            self.lo = self.hi = self.n_lo = self.n_hi = 0
            return
        self.lo, self.hi = int(live.min()), int(live.max())
        self.n_lo, self.n_hi = int((live == self.lo).sum()), int((live == self.hi).sum())

    def rescale_all(self, alive: np.ndarray) -> None:
        self.extremes(alive)
        read = alive & self.scored
        idx = np.flatnonzero(read)
        self.norm[idx] = self.weight * self.scale(self.raw[idx], self.lo, self.hi)
        self.above = read & (self.raw != self.lo)

    def _scaled(self, v: int) -> int:
        key = (v, self.lo, self.hi)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self.weight * int(self.scale(np.array([v], np.int64), self.lo, self.hi)[0])
        return hit

    def _out(self, values: np.ndarray) -> None:
        """Raw scores that stop being read (moved, or their node left)."""
        self.n_lo -= int((values == self.lo).sum())
        self.n_hi -= int((values == self.hi).sum())

    def _in(self, low: int, n_low: int, high: int, n_high: int) -> None:
        """Raw scores read from now on: their minimum and maximum, each with its multiplicity. After _out, an
        extreme whose last node left (multiplicity 0) is known again only if an entering value reaches or passes
        it: every other value read lies strictly inside."""
        if low < self.lo:
            self.lo, self.n_lo = low, n_low
        elif low == self.lo:
            self.n_lo += n_low
        if high > self.hi:
            self.hi, self.n_hi = high, n_high
        elif high == self.hi:
            self.n_hi += n_high

    def _rescale(self, redo: np.ndarray, c: int):
        """The normalized scores of `redo` again; pick's result for them."""
        if len(redo) == 1:
            self.norm[redo[0]] = self._scaled(int(self.raw[redo[0]]))
        elif len(redo):
            self.norm[redo] = self.weight * self.scale(self.raw[redo], self.lo, self.hi)
        return redo if len(redo) > 1 or (len(redo) == 1 and redo[0] != c) else ((c,) if len(redo) else ())

    def pick(self, c: int, alive: np.ndarray):
        """After a copy on candidate c (`alive`: the candidates still feasible after it). Returns the candidates
        whose normalized score moved: () or (c,) when at most c's did, an index array, or None when every
        candidate's may have (all rescaled)."""
        moved = self.model.copy(c)
        if not alive[c] and self.model.leave(c):
            moved = None
        if moved is None:
            self.rescale_all(alive)
            return None
        idx, old = moved
        if isinstance(idx, int):
            return self._pick_one(c, old, alive)
        if not (idx == c).any():                               # c may leave with its raw score unmoved
            idx, old = np.append(idx, c), np.append(old, self.raw[c])
        lo, hi = self.lo, self.hi
        read = self.scored[idx]
        after = read & alive[idx]
        self._out(old[read & (alive[idx] | (idx == c))])      # c was read before its copy
        touched = idx[after]
        new = self.raw[touched]
        if len(new):
            low, high = int(new.min()), int(new.max())
            self._in(low, int((new == low).sum()), high, int((new == high).sum()))
        if self.n_lo <= 0 or self.n_hi <= 0:
            self.extremes(alive)
        if self.lo != lo:
            self.rescale_all(alive)
            return None
        self.above[idx] = after & (self.raw[idx] != self.lo)
        if self.hi == hi:
            redo = touched[new != old[after]]
        else:
            redo = np.flatnonzero(self.above)
            if len(touched) and not self.above[touched].all():
                redo = np.union1d(redo, touched)
        return self._rescale(redo, c)

    def _pick_one(self, c: int, old: int, alive: np.ndarray):
        """pick when the copy moved c's raw score alone (per-node keys): scalar work, and a rescale of the nodes off
        the minimum when the maximum moved."""
        lo, hi = self.lo, self.hi
        new = int(self.raw[c])
        read = bool(self.scored[c])
        if read:
            self.n_lo -= old == lo                             # c was read before its copy
            self.n_hi -= old == hi
            if alive[c]:
                self._in(new, 1, new, 1)
        if self.n_lo <= 0 or self.n_hi <= 0:
            self.extremes(alive)
        if self.lo != lo:
            self.rescale_all(alive)
            return None
        self.above[c] = read and bool(alive[c]) and new != self.lo
        if self.hi == hi:
            if not (read and alive[c]) or new == old:
                return ()
            self.norm[c] = self._scaled(new)
            return (c,)
        redo = np.flatnonzero(self.above)
        if read and alive[c] and not self.above[c]:
            redo = np.append(redo, c)
        return self._rescale(redo, c)


def domain_pick_order(totals: np.ndarray, cap: np.ndarray, rank: np.ndarray, n: int, k: int,
                      scores: list[DomainScore], holders: list[np.ndarray]) -> np.ndarray:
    """The candidates the pod-by-pod loop picks for the next pods of a run, in order.

    totals: (C, J) int64 weighted FIXED + NODE_LOCAL total of each candidate's j-th further copy (j = 0: the next
    pod); cap: (C,) copies each candidate takes before a Filter rejects it; rank: (C,) the candidates' tie-break
    ranks among the n nodes (select_best: the highest total, then the lowest rank); k: pods in the run; scores:
    the DOMAIN scores (their models are moved); holders: per FIXED normalization, (C,) bool the candidates holding
    its extreme (non-empty).

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


__all__ = ["AddedWeights", "DomainScore", "RawModel", "domain_pick_order"]
