"""Small statistics shared by warmup, measurement and reports (numpy only)."""

from __future__ import annotations

from typing import Any

import numpy as np

STABILITY_WINDOWS = 3
STABILITY_TOLERANCE = 0.10


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
