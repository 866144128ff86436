"""Whether the benchmark's budget can reach the sample count each figure needs.

A measurement keeps its last three windows of ``min_duration_s / 3``: the requests in them are
the n of its percentiles, whatever ``max_duration_s`` allows. At a request latency of L ms one
client fills them with about ``min_duration_s * 1000 / L`` requests. p99 has a 95% upper bound
only from 299 samples on, and a measurement with fewer than ``min_requests`` in its kept windows
can never be stable. Checked with the latency warm-up measured (PlanBenchmark), before any
measurement runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from workflows.benchmark.measure import MIN_WINDOW_S
from workflows.benchmark.stats import STABILITY_WINDOWS, samples_for_upper_bound
from workflows.contracts import Finding

P99_SAMPLES = samples_for_upper_bound(0.99)
SAMPLE_COUNT = "sample-count"


def kept_seconds(min_duration_s: float) -> float:
    """The span of the windows a measurement keeps (``workflows.benchmark.measure``)."""
    return STABILITY_WINDOWS * max(min_duration_s / STABILITY_WINDOWS, MIN_WINDOW_S)


def check_sample_budget(
    *,
    latency_ms: Mapping[str, float],
    concurrency: int,
    min_duration_s: float,
    min_requests: int,
    source: str = "warm-up",
) -> list[Finding]:
    """One warning per shape whose kept windows cannot hold the n its figures need.

    Args:
        latency_ms: each shape's label (``b8/128``) and its expected latency per request.
        concurrency: the fewest clients measured (the fewest samples).
        min_duration_s: ``benchmark.min_duration_s``.
        min_requests: ``benchmark.min_requests``.
        source: where the latency comes from, for the message (warm-up, the spec).
    """
    span = kept_seconds(min_duration_s)
    findings = []
    for shape, latency in latency_ms.items():
        if latency <= 0:
            continue
        expected = int(span * 1000 / latency * concurrency)
        short = [f"p99's upper bound needs {P99_SAMPLES}"] if expected < P99_SAMPLES else []
        if expected < min_requests:
            short.append(f"min_requests is {min_requests}, so it cannot be stable")
        if not short:
            continue
        needed = max(P99_SAMPLES, min_requests)
        duration = math.ceil(needed * latency / 1000 / concurrency)
        findings.append(
            Finding(
                id=SAMPLE_COUNT,
                severity="warning",
                message=(
                    f"{shape}: at {latency:.0f} ms per request ({source}), {concurrency} client(s) fill the "
                    f"kept windows ({span:g} s) with about {expected} requests; " + "; ".join(short) + "."
                ),
                fix=(
                    f"set benchmark.min_duration_s to at least {duration} s for about {needed} samples "
                    f"(max_duration_s above it), or accept p99 without an upper bound"
                ),
                evidence=f"latency {latency:.1f} ms, concurrency {concurrency}, kept {span:g} s",
            )
        )
    return findings
