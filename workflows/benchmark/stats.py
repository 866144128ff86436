"""Small statistics shared by warmup, measurement and reports (numpy only).

Percentile intervals are distribution-free: from order statistics and the binomial law, since
latency is skewed and a normal approximation would understate its tail.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STABILITY_WINDOWS = 3
STABILITY_TOLERANCE = 0.10
CONFIDENCE = 0.95
PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))


def within_tolerance(values: list[float], tolerance: float = STABILITY_TOLERANCE) -> bool:
    """True when every value is within ±tolerance of their mean (perf_analyzer's stability test)."""
    if not values:
        return False
    mean = float(np.mean(values))
    return mean > 0 and all(abs(v - mean) <= tolerance * mean for v in values)


def latency_summary(latencies_ms: np.ndarray) -> dict[str, float | None]:
    """p50/p90/p99/max/mean/std in ms; ``None`` for each when there is no successful sample."""
    if latencies_ms.size == 0:
        return dict.fromkeys(("p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms", "std_ms"))
    p50, p90, p99 = np.percentile(latencies_ms, [50, 90, 99])
    return {
        "p50_ms": round(float(p50), 3),
        "p90_ms": round(float(p90), 3),
        "p99_ms": round(float(p99), 3),
        "max_ms": round(float(latencies_ms.max()), 3),
        "mean_ms": round(float(latencies_ms.mean()), 3),
        "std_ms": round(float(latencies_ms.std(ddof=1)), 3) if latencies_ms.size > 1 else 0.0,
    }


def _binomial_pmf(n: int, q: float) -> np.ndarray:
    """P(B = k) for k = 0..n, B ~ Binomial(n, q), in log space (n may be in the hundreds of thousands)."""
    k = np.arange(n, dtype=float)
    steps = np.log(n - k) - np.log(k + 1) + np.log(q) - np.log1p(-q)
    log_pmf = np.concatenate(([n * np.log1p(-q)], n * np.log1p(-q) + np.cumsum(steps)))
    return np.exp(log_pmf)


def order_statistic_ranks(n: int, q: float, confidence: float = CONFIDENCE) -> tuple[int | None, int | None]:
    """1-based ranks (l, u) of the sorted samples bounding the ``q`` quantile with ``confidence``.

    With B the number of samples below the true quantile, ``P(x(l) <= x_q <= x(u)) >=
    P(l <= B <= u - 1)`` for any distribution (equality when continuous). The upper bound is
    placed first, at half the error when it can be and at all of it otherwise: for a latency
    budget the upper bound is the one that decides. The lower bound takes the error left.
    A rank that no sample count can give is None: with fewer than 299 samples, p99 has no upper
    bound at 95% (0.99**298 > 0.05).
    """
    alpha = 1.0 - confidence
    if n <= 0:
        return None, None
    pmf = _binomial_pmf(n, q)
    below = np.cumsum(pmf)  # below[k] = P(B <= k)
    above = np.cumsum(pmf[::-1])[::-1]  # above[k] = P(B >= k)
    upper: int | None = None
    spent = 0.0
    for share in (alpha / 2, alpha):
        fits = np.nonzero(above[1:] <= share + 1e-12)[0]  # candidate u = 1..n: P(B >= u) <= share
        if fits.size:
            upper = int(fits[0]) + 1
            spent = float(above[upper])
            break
    left = alpha - spent
    fits = np.nonzero(below <= left + 1e-12)[0]  # candidate l = k + 1: P(B <= l - 1) <= left
    lower = int(fits[-1]) + 1 if fits.size else None
    return lower, upper


def percentile_intervals(latencies_ms: np.ndarray, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """``p50_ci_ms``, ``p90_ci_ms``, ``p99_ci_ms`` as ``[low, high]``; a bound n cannot give is None."""
    ordered = np.sort(np.asarray(latencies_ms, dtype=float))
    intervals: dict[str, Any] = {}
    for name, q in PERCENTILES:
        lower, upper = order_statistic_ranks(int(ordered.size), q, confidence)
        intervals[f"{name}_ci_ms"] = [
            None if lower is None else round(float(ordered[lower - 1]), 3),
            None if upper is None else round(float(ordered[upper - 1]), 3),
        ]
    return intervals


def samples_for_upper_bound(q: float, confidence: float = CONFIDENCE) -> int:
    """The fewest samples whose largest bounds the ``q`` quantile from above: 299 for p99 at 95%."""
    return int(np.ceil(np.log(1.0 - confidence) / np.log(q) - 1e-9))


def subsample(values: np.ndarray, cap: int, *, seed: int) -> list[float]:
    """At most ``cap`` values, a uniform seeded subsample when there are more, rounded to µs."""
    if values.size > cap:
        values = np.random.default_rng(seed).choice(values, size=cap, replace=False)
    return [round(float(v), 3) for v in values]


def count_kinds(kinds: list[str | None]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for kind in kinds:
        if kind:
            counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def as_array(values: list[float]) -> Any:
    return np.asarray(values, dtype=float)
