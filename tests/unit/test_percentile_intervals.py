"""Distribution-free percentile intervals (order statistics and the binomial law).

The interval method is checked against a known distribution: over many seeded draws of a
log-normal (skewed, as latency is), the interval covers the true percentile about 95% of the
time, and a bound that the sample count cannot give is never made up.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from workflows.benchmark.stats import (
    PERCENTILES,
    _binomial_pmf,
    order_statistic_ranks,
    percentile_intervals,
    samples_for_upper_bound,
)

MU, SIGMA = float(np.log(20.0)), 0.6  # a 20 ms median with a long right tail
TRUE = {name: float(np.exp(MU + SIGMA * NormalDist().inv_cdf(q))) for name, q in PERCENTILES}


def _covers(interval: list[float | None], value: float) -> bool:
    low, high = interval
    return (low is None or low <= value) and (high is None or value <= high)


@pytest.mark.parametrize("n", [30, 300, 1200])
def test_the_interval_covers_the_true_percentile_about_95_percent_of_the_time(n: int) -> None:
    # Given 800 seeded draws of n log-normal latencies
    rng = np.random.default_rng(2500 + n)
    hits = dict.fromkeys(TRUE, 0)
    draws = 800
    # When each draw's intervals are taken
    for _ in range(draws):
        intervals = percentile_intervals(rng.lognormal(MU, SIGMA, n))
        for name, value in TRUE.items():
            hits[name] += _covers(intervals[f"{name}_ci_ms"], value)
    # Then each percentile is covered close to 95% of the time (conservative, never far below)
    coverage = {name: count / draws for name, count in hits.items()}
    assert all(0.93 <= c <= 0.985 for c in coverage.values()), coverage


def test_the_ranks_have_at_least_95_percent_exact_coverage_for_every_n() -> None:
    # Given every sample count from 1 to 1500 and each reported percentile
    for n in range(1, 1501, 7):
        for _, q in PERCENTILES:
            # When the ranks are chosen
            lower, upper = order_statistic_ranks(n, q)
            # Then P(l <= B <= u - 1) for B ~ Binomial(n, q) is at least 95%
            pmf = _binomial_pmf(n, q)
            start = 0 if lower is None else lower
            stop = n + 1 if upper is None else upper
            assert pmf[start:stop].sum() >= 0.95 - 1e-9, (n, q, lower, upper)


def test_p99_has_no_upper_bound_from_fewer_than_299_samples() -> None:
    # Given samples counts either side of 299
    assert samples_for_upper_bound(0.99) == 299
    # When p99's interval is taken from 298 and from 299 samples
    few = percentile_intervals(np.arange(1.0, 299.0))
    enough = percentile_intervals(np.arange(1.0, 300.0))
    # Then 298 samples give no upper bound (null) and 299 give one, the largest sample
    assert few["p99_ci_ms"][1] is None
    assert enough["p99_ci_ms"][1] == 299.0


def test_six_samples_bound_p99_only_from_below() -> None:
    # Given six samples (the bundled default's b8/128 at one client, cut short)
    intervals = percentile_intervals(np.array([410.0, 450.0, 470.0, 520.0, 560.0, 602.0]))
    # Then p50 has an interval, and p99 is at least the second largest sample, with no upper bound
    assert intervals["p50_ci_ms"] == [410.0, 602.0]
    assert intervals["p99_ci_ms"] == [560.0, None]


def test_no_sample_gives_no_bound() -> None:
    intervals = percentile_intervals(np.array([]))
    assert all(v == [None, None] for v in intervals.values())
