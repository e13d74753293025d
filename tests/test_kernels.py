"""Hand-checked kernel cases; expected values are worked out in the comments."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from phalanx.kernels.backend import trunc_div
from phalanx.kernels.balanced_allocation import balanced_allocation_score
from phalanx.kernels.batch import pick_order, pick_order_few
from phalanx.kernels.node_resources_fit import (broken_linear, fit_capacity, fit_filter, fit_filter_few,
                                                least_allocated, most_allocated, requested_to_capacity_ratio)
from phalanx.kernels.normalize import default_normalize
from phalanx.kernels.select import num_feasible_nodes_to_find, select_best, selection_key, selection_keys_few

try:
    from tests.reference import plugins as R
except ImportError:  # tests/ itself on sys.path
    from reference import plugins as R

xp = np
a = np.array


def test_trunc_div_truncates_toward_zero():
    # Go: -7/2 = -3 (numpy floor division gives -4); 7/2 = 3; -6/3 = -2.
    assert trunc_div(xp, a([-7, 7, -6]), a([2, 2, 3])).tolist() == [-3, 3, -2]


def test_least_and_most_allocated():
    # node 0: cpu 1100/4000 -> (2900*100)//4000 = 72; mem 1Gi/8Gi -> (7*100)//8 = 87; weights 1,1 -> 159//2 = 79
    # node 1: cpu over capacity -> 0; memory allocatable 0 -> left out (weight too) -> 0//1 = 0
    req = [a([1100, 5000]), a([1 << 30, 0])]            # per resource: cpu, memory of nodes 0 and 1
    alloc = [a([4000, 4000]), a([8 << 30, 0])]
    assert least_allocated(xp, req, alloc, (1, 1)).tolist() == [79, 0]
    # MostAllocated: node 0: 110000//4000 = 27, 100//8 = 12 -> 39//2 = 19; node 1: capped at 4000 -> 100
    assert most_allocated(xp, req, alloc, (1, 1)).tolist() == [19, 100]
    # weights 3 and 1 on node 0: (72*3 + 87)//4 = 303//4 = 75
    assert least_allocated(xp, [r[:1] for r in req], [c[:1] for c in alloc], (3, 1)).tolist() == [75]


def test_broken_linear_negative_slope_truncates():
    # Segment (0, 70) -> (30, 0): p = 10 -> 70 + (-70*10)/30 = 70 + trunc(-23.3) = 70 - 23 = 47
    # p = 30 -> 0; p = 31 on segment (30,0)->(100,100): 0 + 100*1/70 = 1; p = 200 -> past the end: 100
    shape = ((0, 70), (30, 0), (100, 100))
    assert broken_linear(xp, shape, a([10, 30, 31, 200, 0])).tolist() == [47, 0, 1, 100, 70]


def test_requested_to_capacity_ratio():
    # shape (0,0),(100,10) scaled to (0,0),(100,100). cpu 1000/4000 -> utilization 25 -> 25; memory 3/4 -> 75.
    # Both > 0, weights 1 and 2 -> (25 + 150)/3 = 58.33 -> round -> 58
    s = requested_to_capacity_ratio(xp, [a([1000]), a([3])], [a([4000]), a([4])], (1, 2), ((0, 0), (100, 10)))
    assert s.tolist() == [58]
    # utilization 0 scores 0 and is left out with its weight: only memory counts -> 75
    s = requested_to_capacity_ratio(xp, [a([0]), a([3])], [a([4000]), a([4])], (1, 2), ((0, 0), (100, 10)))
    assert s.tolist() == [75]


def test_balanced_allocation_formulas():
    # fractions with the pod .5/.25 -> std .125 -> int(87.5) = 87; without .25/.125 -> std .0625 -> 93
    # v1.36: 50 + (50 + 87 - 93)//2 = 50 + 22 = 72; v1.35: 87
    after, before, alloc = [a([2000]), a([2])], [a([1000]), a([1])], [a([4000]), a([8])]
    assert balanced_allocation_score(xp, after, alloc, before, "1.36").tolist() == [72]
    assert balanced_allocation_score(xp, after, alloc, before, "1.35").tolist() == [87]
    # three resources .5/.25/1.0 (the last capped from 2.0): mean .5833, population std .3118 -> 68
    three = balanced_allocation_score(xp, [a([2]), a([2]), a([8])], [a([4]), a([8]), a([4])], [a([0])] * 3, "1.35")
    assert three.tolist() == [68]
    # three configured, two valid (middle allocatable 0): the first two valid fractions .5 and 1.0 -> std .25 -> 75
    two = balanced_allocation_score(xp, [a([2]), a([2]), a([8])], [a([4]), a([0]), a([4])], [a([0])] * 3, "1.35")
    assert two.tolist() == [75]


def test_default_normalize():
    raw, feasible = a([0, 2, 4, 9]), a([True, True, True, False])
    # max over feasible = 4: 0, 50, 100 (infeasible -> 0); reversed: 100, 50, 0
    assert default_normalize(xp, raw, feasible, False).tolist() == [0, 50, 100, 0]
    assert default_normalize(xp, raw, feasible, True).tolist() == [100, 50, 0, 0]
    # all zero: reversed gives 100 everywhere feasible
    assert default_normalize(xp, a([0, 0]), a([True, True]), True).tolist() == [100, 100]


def test_fit_filter_codes():
    # node 0: 1000m free of 4000 -> cpu insufficient (Unschedulable); node 1: 2000 allocatable < 3000 request
    # (UnschedulableAndUnresolvable); node 2: pod slots full -> Too many pods only.
    alloc = a([[4000, 100], [2000, 100], [8000, 100]])
    used = a([[3000, 0], [0, 0], [0, 0]])
    code, reasons = fit_filter(xp, alloc, used, a([0, 0, 10]), a([110, 110, 10]), a([3000, 10]))
    assert code.tolist() == [1, 2, 1]
    assert reasons.tolist() == [0b10, 0b10, 0b1]
    # copies that fit: node 0 none; node 1 none; node 2 none (pods); with room: 8000//3000 = 2
    assert fit_capacity(xp, alloc, used, a([0, 0, 0]), a([110, 110, 10]), a([3000, 10])).tolist() == [0, 0, 2]


@given(st.integers(0, 6), st.integers(1, 4), st.data())
def test_fit_filter_few_is_fit_filter(n, r, data):
    """The plain-Python Filter of a few nodes gives fit_filter's codes, reasons and dtypes (overcommitted nodes,
    full pod slots, requests above allocatable, resources not asked for)."""
    ints = lambda lo, hi, size: np.asarray(data.draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size)),
                                           np.int64)
    alloc, used = ints(0, 9, n * r).reshape(n, r) * 1000, ints(0, 12, n * r).reshape(n, r) * 1000
    pods, allowed = ints(0, 5, n), ints(0, 5, n)
    request = ints(0, 6, r) * 1000
    for columns in (None, tuple(int(c) for c in np.flatnonzero(request))):
        want = fit_filter(xp, alloc, used, pods, allowed, request, columns)
        got = fit_filter_few(alloc, used, pods, allowed, request, columns)
        assert [g.dtype for g in got] == [w.dtype for w in want]
        assert [g.tolist() for g in got] == [w.tolist() for w in want]


@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 40), st.data())
def test_pick_order_few_is_pick_order(c, j, k, data):
    """The plain-Python pick order of a few (candidate, copy) pairs is pick_order's real picks, ties included."""
    totals = np.asarray(data.draw(st.lists(st.integers(0, 6), min_size=c * j, max_size=c * j)), np.int64)
    totals = totals.reshape(c, j)
    cap = np.asarray(data.draw(st.lists(st.integers(0, j + 2), min_size=c, max_size=c)), np.int64)
    rank = np.asarray(data.draw(st.permutations(range(c))), np.int64) * 3
    cand, copy, count = pick_order(xp, totals, cap, rank, k)
    got_cand, got_copy, got_count = pick_order_few(totals.tolist(), cap.tolist(), rank.tolist(), k)
    assert got_count == int(count)
    assert (got_cand, got_copy) == (cand[:got_count].tolist(), copy[:got_count].tolist())


def test_pick_order_follows_the_greedy():
    # Candidate 0 scores 50, 40, 90 for its copies; candidate 1 scores 45, 45.
    # Greedy: 50 (c0) -> heads 40 vs 45 -> c1 45 -> heads 40 vs 45 -> c1 45 -> c0 40 -> c0 90.
    totals = a([[50, 40, 90], [45, 45, 0]])
    cand, copy, count = pick_order(xp, totals, a([3, 2]), a([0, 1]), 5)
    assert int(count) == 5
    assert list(zip(cand.tolist(), copy.tolist())) == [(0, 0), (1, 0), (1, 1), (0, 1), (0, 2)]


@given(st.integers(1, 200_000), st.data())
def test_selection_keys_few_equal_the_arrays(n, data):
    """The key of a few feasible nodes on Python ints is selection_key's, totals up to a score sum's size."""
    count = data.draw(st.integers(0, min(n, 64)))
    total = data.draw(st.lists(st.integers(0, 10_000), min_size=count, max_size=count))
    rank = data.draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count, unique=True))
    want = selection_key(np, np.array(total, np.int64), True, np.array(rank, np.int64), n)
    assert selection_keys_few(total, rank, n) == want.tolist()


def test_select_best_tie_break():
    total, feasible = a([5, 9, 9, 9]), a([True, True, True, False])
    assert int(select_best(xp, total, feasible, a([0, 1, 2, 3]))) == 1
    assert int(select_best(xp, total, feasible, a([3, 2, 0, 1]))) == 2       # lower rank wins the tie
    assert int(select_best(xp, total, a([False] * 4), a([0, 1, 2, 3]))) == -1
    # The same through the rank's inverse (node of each rank), as the compiled programs select.
    assert int(select_best(xp, total, feasible, a([3, 2, 0, 1]), a([2, 3, 1, 0]))) == 2
    assert int(select_best(xp, total, a([False] * 4), a([3, 2, 0, 1]), a([2, 3, 1, 0]))) == -1


@pytest.mark.parametrize("pct,n,want", [(100, 5000, 5000), (0, 50, 50), (0, 5000, 500), (0, 100_000, 5000),
                                        (10, 500, 100), (30, 1000, 300)])
def test_num_feasible_nodes_to_find(pct, n, want):
    # adaptive: 50 - 5000//125 = 10% of 5000 = 500; 100k: 50 - 800 < 5 -> 5% = 5000; small results floor at 100
    assert num_feasible_nodes_to_find(pct, n) == want


# Large arrays take numpy's shortcuts (a scalar weight sum; no division when every feasible raw score is 0); the plain
# per-node formulas of tests/reference/plugins.py say what each node scores.
@given(st.data(), st.integers(65, 300), st.sampled_from([(1, 1), (3, 1), (2, 5)]), st.booleans(), st.booleans(),
       st.booleans())
def test_large_resource_scores_match_the_plain_formulas(data, n, weights, some_zero, most, one_type):
    ints = lambda lo, hi: a(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), np.int64)
    alloc = [ints(1, 10**10), ints(1, 10**12)]
    if one_type:          # every node alike: divided by a scalar
        alloc = [np.full(n, data.draw(st.integers(1, 10**10)), np.int64),
                 np.full(n, data.draw(st.integers(1, 10**12)), np.int64)]
    if some_zero:
        alloc[1][data.draw(st.integers(0, n - 1))] = 0
    req = [ints(0, 2 * 10**10), ints(0, 2 * 10**12)]
    kernel, plain = (most_allocated, R.most_requested_score) if most else (least_allocated, R.least_requested_score)
    got = kernel(xp, req, alloc, weights).tolist()
    for i in range(n):
        valid = [r for r in range(2) if alloc[r][i] != 0]
        wsum = sum(weights[r] for r in valid)
        total = sum(plain(int(req[r][i]), int(alloc[r][i])) * weights[r] for r in valid)
        assert got[i] == (total // wsum if wsum else 0)


@given(st.data(), st.integers(65, 200), st.booleans(), st.booleans())
def test_large_default_normalize_matches_the_plain_formula(data, n, zeros, reverse):
    raw = a(data.draw(st.lists(st.integers(0, 0 if zeros else 50), min_size=n, max_size=n)), np.int64)
    feasible = a(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    want = R.default_normalize({i: int(raw[i]) for i in range(n) if feasible[i]}, reverse)
    assert default_normalize(xp, raw, feasible, reverse).tolist() == [want.get(i, 0) for i in range(n)]


def test_a_node_with_no_configured_resource_scores_0():
    # Both allocatables 0: both resources left out, weight sum 0 -> 0 (upstream: resourceScoringFunction's 0).
    req, alloc = [a([500, 500]), a([1 << 20, 1 << 20])], [a([0, 4000]), a([0, 8 << 30])]
    assert least_allocated(xp, req, alloc, (1, 1)).tolist()[0] == 0
    assert most_allocated(xp, req, alloc, (1, 1)).tolist()[0] == 0
