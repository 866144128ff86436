"""Measure one shape at one concurrency in windows until stable (perf_analyzer's method).

``concurrency`` closed-loop clients send requests; the run is cut into windows that close on time
(``min_duration_s / 3``), on a request count (a third of the n the figures need: 100 for p99's 299,
perf_analyzer's ``count_windows``), or on both (``auto``, the default; ``workflows.benchmark.sizing``).
At the ceiling a window still open closes where it is. Stable means the stopping rule held: the last three windows agree within
±10% on both throughput and median latency, AND the floors were met — a minimum duration and a
minimum count of requests in the windows kept (optimum-benchmark's method). At the ceiling,
``max_duration_s``, the measurement stops and is ``stable: false`` with ``unstable_reason``
naming each criterion it missed. Figures are taken over the last three windows, with each
percentile's distribution-free 95% interval; every window is kept in the result so the noise
between them can be judged later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from workflows.benchmark.client import Outcome
from workflows.benchmark.payloads import Shape
from workflows.benchmark.server_side import MetricsProbe, Snapshot, beside_client, server_figures
from workflows.benchmark.sizing import Windows, target_requests, window_requests, window_seconds
from workflows.benchmark.stats import (
    STABILITY_TOLERANCE,
    STABILITY_WINDOWS,
    count_kinds,
    latency_summary,
    percentile_intervals,
    subsample,
    within_tolerance,
)

SAMPLE_CAP = 20_000
"""Latency samples kept per measurement for bootstrap comparisons (a seeded subsample beyond)."""

Sample = tuple[float, str | None, int]  # latency ms, error kind, retries


def _window(samples: list[Sample], span_s: float) -> dict[str, Any]:
    ok = np.fromiter((s[0] for s in samples if s[1] is None), dtype=float)
    return {
        "requests": len(samples),
        "errors": len(samples) - int(ok.size),
        "requests_per_s": round(ok.size / span_s, 3) if span_s > 0 else 0.0,
        "p50_ms": round(float(np.median(ok)), 3) if ok.size else None,
        "mean_ms": round(float(ok.mean()), 3) if ok.size else None,
    }


def _stable(windows: list[dict[str, Any]], tolerance: float) -> bool:
    last = windows[-STABILITY_WINDOWS:]
    if len(last) < STABILITY_WINDOWS or any(w["p50_ms"] is None for w in last):
        return False
    return within_tolerance([w["requests_per_s"] for w in last], tolerance) and within_tolerance(
        [w["p50_ms"] for w in last], tolerance
    )


def unmet_criteria(
    windows: list[dict[str, Any]],
    *,
    elapsed_s: float,
    min_duration_s: float,
    min_requests: int,
    tolerance: float = STABILITY_TOLERANCE,
    target: int = 0,
) -> list[str]:
    """Each part of the stopping rule the measurement so far misses; empty when it held.

    ``target``: with windows sized by request count, the kept windows are complete only once they
    hold the n the figures need (p99's 299): fewer, cut by the ceiling, is never stable.
    """
    unmet: list[str] = []
    kept = sum(w["requests"] for w in windows[-STABILITY_WINDOWS:])
    if kept < min_requests:
        unmet.append(f"{kept} requests in the kept windows < min_requests {min_requests}")
    elif kept < target:
        unmet.append(f"{kept} requests in the kept windows < n={target} that p99's upper bound needs")
    if elapsed_s < min_duration_s:
        unmet.append(f"{elapsed_s:.1f} s < min_duration_s {min_duration_s:g}")
    if not _stable(windows, tolerance):
        unmet.append(f"the last {STABILITY_WINDOWS} windows did not agree within ±{tolerance:.0%}")
    return unmet


def measure(
    call: Callable[[bytes], Outcome],
    bodies: list[bytes],
    shape: Shape,
    *,
    concurrency: int,
    min_duration_s: float,
    min_requests: int,
    max_duration_s: float,
    tolerance: float = STABILITY_TOLERANCE,
    seed: int = 0,
    windows_by: Windows = "auto",
    probe: MetricsProbe | None = None,
) -> dict[str, Any]:
    """Measure ``shape`` at ``concurrency``; returns every figure of the measurement.

    ``probe``: the endpoint's own latency histogram, read at every window boundary so that the
    server's figures cover the same kept windows as the client's (``server``).
    """
    window_s = window_seconds(windows_by, min_duration_s)
    per_window = window_requests(windows_by, min_requests)
    samples: list[Sample] = []
    lock = threading.Lock()
    stop = threading.Event()
    # Set by a client when the open window holds its requests (count and auto windows).
    filled = threading.Event()
    goal = [per_window]

    def client(index: int) -> None:
        sent = 0
        while not stop.is_set():
            outcome = call(bodies[(index + sent * concurrency) % len(bodies)])
            sent += 1
            with lock:
                samples.append((outcome.latency_ms, outcome.error, outcome.retries))
                if len(samples) >= goal[0]:
                    filled.set()

    wall_start = time.time()
    started = time.perf_counter()
    threads = [
        threading.Thread(target=client, args=(i,), name=f"measure-{i}", daemon=True)
        for i in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    windows: list[dict[str, Any]] = []
    # Window i holds the samples appended between two boundaries: slices, not scans, so a long
    # measurement at thousands of requests per second costs no more per window than a short one.
    bounds: list[tuple[int, float]] = [(0, started)]
    snapshots: list[Snapshot | None] = [probe.snapshot() if probe else None]
    reason = "max_duration"
    unmet: list[str] = []
    while True:
        cap = started + max_duration_s
        time.sleep(max(0.0, min(bounds[-1][1] + window_s, cap) - time.perf_counter()))
        if per_window:
            filled.wait(timeout=max(0.0, cap - time.perf_counter()))
        with lock:
            index, now = len(samples), time.perf_counter()
            chunk = samples[bounds[-1][0] : index]
            goal[0] = index + per_window
            filled.clear()
        windows.append(_window(chunk, now - bounds[-1][1]))
        bounds.append((index, now))
        snapshots.append(probe.snapshot() if probe and snapshots[0] is not None else None)
        unmet = unmet_criteria(
            windows,
            elapsed_s=now - started,
            min_duration_s=min_duration_s,
            min_requests=min_requests,
            tolerance=tolerance,
            target=target_requests(min_requests) if per_window else 0,
        )
        if not unmet:
            reason = "stable"
            break
        if now - started >= max_duration_s:
            break
    stop.set()
    for thread in threads:
        thread.join()
    first_index = max(0, len(bounds) - 1 - STABILITY_WINDOWS)
    first_kept = bounds[first_index]
    last = bounds[-1]
    kept_samples = samples[first_kept[0] : last[0]]
    begin, end = first_kept[1], last[1]
    figures = summarize(
        shape,
        concurrency,
        kept_samples,
        duration_s=end - begin,
        windows=windows,
        stable=not unmet,
        stop_reason=reason,
        unstable_reason="; ".join(unmet),
        wall=(wall_start + (begin - started), wall_start + (end - started)),
        seed=seed,
        windows_by=windows_by,
        target_requests=target_requests(min_requests),
    )
    if probe is not None:
        server = server_figures(snapshots[first_index], snapshots[-1], source=probe.source)
        figures["server"] = beside_client(figures, server)
    return figures


def summarize(
    shape: Shape,
    concurrency: int,
    samples: list[Sample],
    *,
    duration_s: float,
    windows: list[dict[str, Any]],
    stable: bool,
    stop_reason: str,
    wall: tuple[float, float],
    unstable_reason: str = "",
    windows_by: Windows,
    target_requests: int,
    seed: int = 0,
) -> dict[str, Any]:
    """Percentiles with their 95% intervals, mean, std, throughput, errors by kind and the kept
    samples of a measurement (the intervals come from every kept sample, not the subsample)."""
    latencies = np.fromiter((s[0] for s in samples if s[1] is None), dtype=float)
    duration = max(duration_s, 1e-9)
    ok = int(latencies.size)
    errors = count_kinds([s[1] for s in samples])
    return {
        "batch_size": shape.batch_size,
        "sequence_length": shape.sequence_length,
        "concurrency": concurrency,
        **latency_summary(latencies),
        **percentile_intervals(latencies),
        "requests": len(samples),
        "errors": len(samples) - ok,
        "errors_by_kind": errors,
        "retries": sum(s[2] for s in samples),
        "duration_s": round(duration, 3),
        "samples_per_s": round(ok * shape.batch_size / duration, 3),
        "requests_per_s": round(ok / duration, 3),
        "stable": stable,
        "stop_reason": stop_reason,
        "unstable_reason": "" if stable else unstable_reason,
        "windows": windows,
        "windows_by": windows_by,
        "kept_windows": min(len(windows), STABILITY_WINDOWS),
        # What the kept windows had to hold (p99's 299, or min_requests); fewer leaves p99 unbounded.
        "target_requests": target_requests,
        "started_at": round(wall[0], 3),
        "ended_at": round(wall[1], 3),
        "latencies_ms": subsample(latencies, SAMPLE_CAP, seed=seed),
    }
