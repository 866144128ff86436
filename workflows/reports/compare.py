"""Regression verdicts between two runs, called only when a difference exceeds the measured noise.

Latency: the difference of medians with a bootstrap confidence interval over each run's kept
latency samples; the noise floor is the spread of the median between a run's own stable windows.
A change is called when the 95% interval excludes zero AND the relative change exceeds both runs'
window-to-window spread. Throughput: the same resampling, of each run's mean latency (closed-loop
clients send concurrency / mean latency requests a second); called when the 95% interval of the
relative change excludes zero and the change exceeds both runs' window-to-window spread. Fewer than ``MIN_SAMPLES`` samples,
fewer than three windows, or an unstable measurement on either side gives "no verdict".

Callers may add a practical-significance floor, ``min_change_pct``: a change smaller than it is
never called, however significant statistically (thousands of samples resolve a 1 % shift that
matters to nobody). ``deploybench report`` uses none; a sweep takes it from its file.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

MIN_SAMPLES = 30
RESAMPLES = 2000
BOOTSTRAP_CAP = 5000
BOOTSTRAP_CHUNK = 200
CONFIDENCE = 0.95
REGRESSION, IMPROVEMENT, WITHIN_NOISE, NO_VERDICT = "regression", "improvement", "within noise", "no verdict"
INDISTINGUISHABLE = "indistinguishable at this n"


def key(measurement: dict[str, Any]) -> tuple[int, str, int]:
    return (measurement["batch_size"], str(measurement["sequence_length"]), measurement["concurrency"])


def _kept_windows(measurement: dict[str, Any]) -> list[dict[str, Any]]:
    windows = measurement.get("windows") or []
    return windows[-int(measurement.get("kept_windows") or 0) :] if windows else []


def _spread(values: list[float]) -> float:
    """Relative spread (max/min - 1) of a run's own windows: its noise floor."""
    values = [v for v in values if v]
    return max(values) / min(values) - 1 if len(values) > 1 and min(values) > 0 else 0.0


def _no_verdict(baseline: dict[str, Any], candidate: dict[str, Any]) -> str | None:
    for name, m in (("baseline", baseline), ("candidate", candidate)):
        samples = len(m.get("latencies_ms") or [])
        if samples < MIN_SAMPLES:
            return f"{name} has {samples} latency samples (< {MIN_SAMPLES})"
        if len(_kept_windows(m)) < 3:
            return f"{name} has fewer than 3 measurement windows"
        if not m.get("stable"):
            return f"{name} did not reach a stable measurement"
    return None


def _capped(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A seeded subsample beyond ``BOOTSTRAP_CAP`` (the interval only widens: conservative)."""
    return rng.choice(values, size=BOOTSTRAP_CAP, replace=False) if values.size > BOOTSTRAP_CAP else values


def _bootstrap_medians(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Medians of ``RESAMPLES`` resamples, drawn in chunks to bound memory."""
    chunks = [
        np.median(rng.choice(values, size=(min(BOOTSTRAP_CHUNK, RESAMPLES - done), values.size)), axis=1)
        for done in range(0, RESAMPLES, BOOTSTRAP_CHUNK)
    ]
    return np.concatenate(chunks)


def _samples(
    baseline: dict[str, Any], candidate: dict[str, Any], seed: int
) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """Both runs' latency samples (capped) and the seeded generator that goes on to resample them."""
    rng = np.random.default_rng(seed)
    a = _capped(np.asarray(baseline["latencies_ms"], dtype=float), rng)
    b = _capped(np.asarray(candidate["latencies_ms"], dtype=float), rng)
    return a, b, rng


def _interval(resampled: np.ndarray) -> tuple[float, float]:
    """The central ``CONFIDENCE`` interval of the resampled changes."""
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = (float(x) for x in np.percentile(resampled, [tail, 100 - tail]))
    return low, high


def _noise(baseline: dict[str, Any], candidate: dict[str, Any], figure: str) -> float:
    """The larger of the two runs' window-to-window spread of ``figure``."""
    return max(
        _spread([w[figure] for w in _kept_windows(baseline)]),
        _spread([w[figure] for w in _kept_windows(candidate)]),
    )


def _judged(
    change: float,
    interval: tuple[float, float],
    noise: float,
    min_change_pct: float,
    samples: tuple[np.ndarray, np.ndarray],
    figures: dict[str, Any],
    *,
    rise: str,
) -> dict[str, Any]:
    """The verdict with its figures: ``rise`` (a regression or an improvement) or its opposite when the
    interval excludes zero on that side and the change passes both the noise and ``min_change_pct``;
    within noise otherwise."""
    low, high = interval
    fall = IMPROVEMENT if rise == REGRESSION else REGRESSION
    floor = max(noise, min_change_pct / 100)
    verdict = WITHIN_NOISE
    if low > 0 and change > floor:
        verdict = rise
    elif high < 0 and -change > floor:
        verdict = fall
    return {
        "verdict": verdict,
        **figures,
        "noise": round(noise, 4),
        "min_change": round(min_change_pct / 100, 4),
        "n": [int(sample.size) for sample in samples],
    }


def latency_verdict(
    baseline: dict[str, Any], candidate: dict[str, Any], *, seed: int = 0, min_change_pct: float = 0.0
) -> dict[str, Any]:
    """Median latency change of ``candidate`` against ``baseline`` with its bootstrap interval.

    Args:
        baseline: A measurement with ``latencies_ms``, ``windows``, ``kept_windows`` and ``stable``.
        candidate: The same, of the run judged.
        seed: Seed of the bootstrap's resampling (verdicts are reproducible).
        min_change_pct: Smallest relative change, in percent, ever called a change.
    """
    reason = _no_verdict(baseline, candidate)
    if reason:
        return {"verdict": NO_VERDICT, "reason": reason}
    a, b, rng = _samples(baseline, candidate, seed)
    diffs = _bootstrap_medians(b, rng) - _bootstrap_medians(a, rng)
    low, high = _interval(diffs)
    base = float(np.median(a))
    change = (float(np.median(b)) - base) / base
    noise = _noise(baseline, candidate, "p50_ms")
    figures = {"median_change": round(change, 4), "diff_ms_ci95": [round(low, 3), round(high, 3)]}
    # Latency rising is the regression.
    judged = _judged(change, (low, high), noise, min_change_pct, (a, b), figures, rise=REGRESSION)
    if low <= 0 <= high:
        judged["reason"] = INDISTINGUISHABLE
        judged["n_to_separate"] = n_to_separate(
            max(a.size, b.size), (high - low) / 2, float(np.median(b)) - base
        )
    return judged


def n_to_separate(n: int, half_width: float, difference: float) -> int | None:
    """About the samples per run whose interval would exclude zero at this difference of medians
    (an interval's half-width goes as 1/√n); None when the medians are equal."""
    if difference == 0:
        return None
    return max(n + 1, math.ceil(n * (half_width / abs(difference)) ** 2))


def _bootstrap_means(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Means of ``RESAMPLES`` resamples, drawn in chunks to bound memory."""
    chunks = [
        rng.choice(values, size=(min(BOOTSTRAP_CHUNK, RESAMPLES - done), values.size)).mean(axis=1)
        for done in range(0, RESAMPLES, BOOTSTRAP_CHUNK)
    ]
    return np.concatenate(chunks)


def throughput_verdict(
    baseline: dict[str, Any], candidate: dict[str, Any], *, seed: int = 0, min_change_pct: float = 0.0
) -> dict[str, Any]:
    """Requests/s change with a bootstrap interval, the resampling latency's verdict uses.

    Closed-loop clients send ``concurrency / mean latency`` requests a second (Little's law), so the
    throughput of a resample is its clients over its mean latency: the interval of the relative change
    comes from resampling each run's kept latency samples. A change is called when the 95% interval
    excludes zero AND the change exceeds both runs' window-to-window spread (and ``min_change_pct``).
    """
    reason = _no_verdict(baseline, candidate)
    if reason:
        return {"verdict": NO_VERDICT, "reason": reason}
    a, b, rng = _samples(baseline, candidate, seed)
    clients = candidate["concurrency"] / baseline["concurrency"]
    changes = _bootstrap_means(a, rng) / _bootstrap_means(b, rng) * clients - 1
    low, high = _interval(changes)
    change = float(a.mean()) / float(b.mean()) * clients - 1
    noise = _noise(baseline, candidate, "requests_per_s")
    measured = (
        candidate["requests_per_s"] / baseline["requests_per_s"] - 1
        if baseline.get("requests_per_s")
        else None
    )
    figures = {
        "mean_change": round(change, 4),
        "change_ci95": [round(low, 4), round(high, 4)],
        "measured_change": None if measured is None else round(measured, 4),
    }
    # Throughput rising is the improvement.
    judged = _judged(change, (low, high), noise, min_change_pct, (a, b), figures, rise=IMPROVEMENT)
    if low <= 0 <= high:
        judged["reason"] = INDISTINGUISHABLE
    return judged


def compare(
    baseline: dict[str, Any], candidate: dict[str, Any], *, min_change_pct: float = 0.0
) -> list[dict[str, Any]]:
    """Per shape and concurrency measured in both results: latency and throughput verdicts.

    Args:
        baseline: A result document (schema 2: ``measurements`` with windows and latency samples).
        candidate: The result judged against it.
        min_change_pct: Smallest relative change, in percent, ever called a regression or an
            improvement; 0 leaves the noise floor alone to decide.

    Returns:
        One row per shape and concurrency in both: its ``latency`` and ``throughput`` verdicts
        and the overall ``verdict`` (regression before improvement before no verdict).
    """
    theirs = {key(m): m for m in candidate.get("measurements") or []}
    rows = []
    for m in baseline.get("measurements") or []:
        other = theirs.get(key(m))
        if other is None:
            continue
        latency = latency_verdict(m, other, min_change_pct=min_change_pct)
        throughput = throughput_verdict(m, other, min_change_pct=min_change_pct)
        verdicts = {latency["verdict"], throughput["verdict"]}
        overall = next((v for v in (REGRESSION, IMPROVEMENT, NO_VERDICT) if v in verdicts), WITHIN_NOISE)
        rows.append(
            {
                "batch_size": m["batch_size"],
                "sequence_length": m["sequence_length"],
                "concurrency": m["concurrency"],
                "latency": latency,
                "throughput": throughput,
                "verdict": overall,
            }
        )
    return rows
