"""Warmup until stable, then measure in windows until stable (perf_analyzer's method).

Stability: the last three windows agree within ±10% on both throughput and median latency.
A measurement also has floors on duration and request count (optimum-benchmark's method) and a
ceiling on duration, after which it is reported as not stable rather than run forever.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workflows.benchmark.client import Outcome
from workflows.benchmark.payloads import Shape

STABILITY_WINDOWS = 3
STABILITY_TOLERANCE = 0.10
WARMUP_WINDOW = 5
PAYLOAD_VARIANTS = 16
TIMEOUT_ERRORS = {"ReadTimeout", "ModelError"}


def within_tolerance(values: list[float], tolerance: float = STABILITY_TOLERANCE) -> bool:
    """True when every value is within ±tolerance of their mean."""
    if not values:
        return False
    mean = float(np.mean(values))
    return mean > 0 and all(abs(v - mean) <= tolerance * mean for v in values)


@dataclass
class WarmupOutcome:
    requests: int
    first_ms: float
    last_ms: float
    stable: bool
    timeouts: int
    errors: dict[str, int] = field(default_factory=dict)
    last_error: str | None = None


def warm_up(call: Callable[[bytes], Outcome], bodies: list[bytes], *, max_requests: int) -> WarmupOutcome:
    """Send requests until the median of the last three windows of five agrees within ±10%.

    First calls that time out while a worker loads (F18) or an engine compiles (F21) are
    tolerated and counted; a shape that never answers successfully is not stable.
    """
    latencies: list[float] = []
    errors: dict[str, int] = {}
    first = None
    last_error = None
    sent = 0
    while sent < max_requests:
        outcome = call(bodies[sent % len(bodies)])
        sent += 1
        if first is None:
            first = outcome.latency_ms
        if outcome.error:
            errors[outcome.error] = errors.get(outcome.error, 0) + 1
            last_error = outcome.message
            continue
        latencies.append(outcome.latency_ms)
        windows = len(latencies) // WARMUP_WINDOW
        if windows >= STABILITY_WINDOWS:
            recent = [
                float(np.median(latencies[(w) * WARMUP_WINDOW : (w + 1) * WARMUP_WINDOW]))
                for w in range(windows - STABILITY_WINDOWS, windows)
            ]
            if within_tolerance(recent):
                return WarmupOutcome(sent, first, latencies[-1], True, _timeouts(errors), errors, last_error)
    last = latencies[-1] if latencies else 0.0
    return WarmupOutcome(sent, first or 0.0, last, False, _timeouts(errors), errors, last_error)


def _timeouts(errors: dict[str, int]) -> int:
    return sum(count for kind, count in errors.items() if kind in TIMEOUT_ERRORS)


@dataclass
class Sample:
    finished_at: float
    latency_ms: float
    error: str | None


@dataclass
class Measurement:
    shape: Shape
    concurrency: int
    samples: list[Sample]
    duration_s: float
    stable: bool

    def successes(self) -> np.ndarray:
        return np.array([s.latency_ms for s in self.samples if s.error is None], dtype=float)

    def errors(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for sample in self.samples:
            if sample.error:
                counts[sample.error] = counts.get(sample.error, 0) + 1
        return counts


def _window_stats(samples: list[Sample], start: float, end: float) -> tuple[float, float]:
    inside = [s.latency_ms for s in samples if start <= s.finished_at < end and s.error is None]
    if not inside:
        return 0.0, 0.0
    return len(inside) / (end - start), float(np.median(inside))


def measure(
    call: Callable[[bytes], Outcome],
    bodies: list[bytes],
    shape: Shape,
    *,
    concurrency: int,
    min_duration_s: float,
    min_requests: int,
    max_duration_s: float,
) -> Measurement:
    """Run ``concurrency`` closed-loop clients in windows of ``min_duration_s / 3`` until the last three
    windows are stable and both floors are met, or ``max_duration_s`` passes. Figures are taken over
    the last three windows."""
    window_s = max(min_duration_s / STABILITY_WINDOWS, 0.2)
    samples: list[Sample] = []
    lock = threading.Lock()
    stop = threading.Event()

    def client(index: int) -> None:
        sent = 0
        while not stop.is_set():
            outcome = call(bodies[(index + sent * concurrency) % len(bodies)])
            sent += 1
            with lock:
                samples.append(Sample(time.perf_counter(), outcome.latency_ms, outcome.error))

    started = time.perf_counter()
    stable = False
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for index in range(concurrency):
            pool.submit(client, index)
        windows: list[tuple[float, float]] = []
        while True:
            window_start = started + len(windows) * window_s
            time.sleep(max(0.0, window_start + window_s - time.perf_counter()))
            with lock:
                windows.append(_window_stats(samples, window_start, window_start + window_s))
                recent_start = started + max(0, len(windows) - STABILITY_WINDOWS) * window_s
                recent_count = sum(1 for s in samples if s.finished_at >= recent_start)
            elapsed = time.perf_counter() - started
            last = windows[-STABILITY_WINDOWS:]
            stable = (
                len(last) == STABILITY_WINDOWS
                and within_tolerance([w[0] for w in last])
                and within_tolerance([w[1] for w in last])
            )
            if (
                stable and elapsed >= min_duration_s and recent_count >= min_requests
            ) or elapsed >= max_duration_s:
                break
        stop.set()
    end = started + len(windows) * window_s
    begin = started + max(0, len(windows) - STABILITY_WINDOWS) * window_s
    kept = [s for s in samples if begin <= s.finished_at < end]
    return Measurement(shape, concurrency, kept, end - begin, stable)


def summarize(measurement: Measurement) -> dict[str, Any]:
    """Percentiles, mean, std, throughput and error count of a measurement."""
    latencies = measurement.successes()
    duration = max(measurement.duration_s, 1e-9)
    ok = int(latencies.size)
    if ok == 0:
        nan = float("nan")
        stats = {"p50_ms": nan, "p90_ms": nan, "p99_ms": nan, "max_ms": nan, "mean_ms": nan, "std_ms": nan}
    else:
        p50, p90, p99 = np.percentile(latencies, [50, 90, 99])
        stats = {
            "p50_ms": float(p50),
            "p90_ms": float(p90),
            "p99_ms": float(p99),
            "max_ms": float(latencies.max()),
            "mean_ms": float(latencies.mean()),
            "std_ms": float(latencies.std(ddof=1)) if ok > 1 else 0.0,
        }
    return {
        **{k: round(v, 3) for k, v in stats.items()},
        "requests": len(measurement.samples),
        "errors": len(measurement.samples) - ok,
        "duration_s": round(duration, 3),
        "samples_per_s": round(ok * measurement.shape.batch_size / duration, 3),
        "requests_per_s": round(ok / duration, 3),
        "stable": measurement.stable,
    }
