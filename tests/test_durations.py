"""Go's time.ParseDuration and Duration.String (phalanx.cluster_models.durations), on values checked by hand against
the Go documentation and source (src/time/format.go: ParseDuration, Duration.String)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phalanx.cluster_models.durations import duration_text, parse_duration

S = 10**9


@pytest.mark.parametrize("text,ns", [
    ("0", 0), ("-0", 0), ("+0", 0), ("0s", 0), ("5s", 5 * S), ("-1.5s", -3 * S // 2), ("+2m", 120 * S),
    ("1h2m3.5s", 3723 * S + S // 2), ("1.5h", 5400 * S), (".5s", S // 2), ("1.s", S), ("300ms", 3 * S // 10),
    ("1us", 1000), ("1\u00b5s", 1000), ("1\u03bcs", 1000), ("7ns", 7),
    ("1.0000000001s", S),                          # 0.1 ns: the float64 scaling truncates it
    ("2562047h47m16.854775807s", (1 << 63) - 1),   # the largest Duration
    ("-2562047h47m16.854775808s", -(1 << 63)),     # and the smallest
])
def test_parse(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize("text,error", [
    ("", 'time: invalid duration ""'), ("abc", 'time: invalid duration "abc"'), ("-", 'time: invalid duration "-"'),
    (".s", 'time: invalid duration ".s"'), ("1", 'time: missing unit in duration "1"'),
    ("1x", 'time: unknown unit "x" in duration "1x"'), ("1s2", 'time: missing unit in duration "1s2"'),
    ("2562047h47m16.854775808s", 'time: invalid duration "2562047h47m16.854775808s"'),
    ("9999999999999999999h", 'time: invalid duration "9999999999999999999h"'),
    ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
])
def test_parse_errors(text, error):
    with pytest.raises(ValueError) as err:
        parse_duration(text)
    assert str(err.value) == error


@pytest.mark.parametrize("ns,text", [
    (0, "0s"), (1, "1ns"), (999, "999ns"), (1500, "1.5\u00b5s"), (1_500_000, "1.5ms"), (S, "1s"), (3 * S // 2, "1.5s"),
    (90 * S, "1m30s"), (300 * S, "5m0s"), (3600 * S, "1h0m0s"), (72 * 3600 * S + 180 * S + S // 2, "72h3m0.5s"),
    (-3 * S // 2, "-1.5s"), (-1, "-1ns"), ((1 << 63) - 1, "2562047h47m16.854775807s"),
    (-(1 << 63), "-2562047h47m16.854775808s"),
])
def test_text(ns, text):
    assert duration_text(ns) == text


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_text_parses_back(ns):
    assert parse_duration(duration_text(ns)) == ns
