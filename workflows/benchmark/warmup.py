"""Warm one shape until every worker has loaded and its latency is stable — never a fixed count.

Field facts behind it: warmup 5 left a serverless p99 of 31,478 ms, warmup 15 gave 253 ms; with
4 workers, warmup 3 left p99 at 1611 ms, warmup 20 gave 20.4 ms (F16/F33): workers load one
after another and first calls wait. So the shape is warmed with at least as many concurrent
clients as there are workers (every worker gets requests), and stability is judged on the median
AND the mean of windows: a worker still loading slows a minority of requests, which moves the
mean long before it moves the median.

The very first request is sent alone and recorded apart: it is the cold start (after deploy, or
the first call of a shape, which compiles an engine on TensorRT, F21, or loads a model lazily on
LMI, F18). Errors and timeouts during warmup are tolerated and counted, never raised.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from workflows.benchmark.client import TIMEOUT_KINDS, Outcome
from workflows.benchmark.stats import STABILITY_TOLERANCE, STABILITY_WINDOWS, count_kinds, within_tolerance

MIN_WINDOW = 5


def window_size(concurrency: int) -> int:
    """Requests per warmup window: at least 5, and two rounds of every client."""
    return max(MIN_WINDOW, 2 * concurrency)


def stable_windows(
    outcomes: list[Outcome], window: int, tolerance: float = STABILITY_TOLERANCE
) -> tuple[bool, list[float]]:
    """Whether the last three complete windows are clean (no error) and agree within ±tolerance on
    both median and mean; returns the verdict and the windows' medians."""
    complete = len(outcomes) // window
    if complete < STABILITY_WINDOWS:
        return False, []
    medians, means, clean = [], [], True
    for w in range(complete - STABILITY_WINDOWS, complete):
        chunk = outcomes[w * window : (w + 1) * window]
        clean = clean and all(o.error is None for o in chunk)
        latencies = np.fromiter((o.latency_ms for o in chunk), dtype=float, count=len(chunk))
        medians.append(float(np.median(latencies)))
        means.append(float(latencies.mean()))
    stable = clean and within_tolerance(medians, tolerance) and within_tolerance(means, tolerance)
    return stable, medians


class _Closed:
    """Closed-loop clients sharing a request budget; each completed window is judged at once."""

    def __init__(
        self,
        call: Callable[[bytes], Outcome],
        bodies: list[bytes],
        *,
        budget: int,
        window: int,
        tolerance: float,
        deadline: float | None,
    ) -> None:
        self.call = call
        self.bodies = bodies
        self.budget = budget
        self.window = window
        self.tolerance = tolerance
        self.deadline = deadline
        self.sent = 0
        self.outcomes: list[Outcome] = []
        self.medians: list[float] = []
        self.first_success_at: float | None = None
        self.reason = "max_requests"
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def _judge(self) -> None:
        """Called under the lock when a window completes."""
        recent = self.outcomes[-STABILITY_WINDOWS * self.window :]
        stable, medians = stable_windows(recent, self.window, self.tolerance)
        self.medians = medians or self.medians
        if stable:
            self.reason = "stable"
            self.stop.set()

    def client(self, index: int) -> None:
        while not self.stop.is_set():
            with self.lock:
                if self.deadline is not None and time.perf_counter() >= self.deadline:
                    self.reason = "max_seconds"
                    self.stop.set()
                if self.sent >= self.budget or self.stop.is_set():
                    return
                number = self.sent
                self.sent += 1
            outcome = self.call(self.bodies[(index + number) % len(self.bodies)])
            with self.lock:
                self.outcomes.append(outcome)
                if outcome.error is None and self.first_success_at is None:
                    self.first_success_at = time.perf_counter()
                if len(self.outcomes) % self.window == 0 and not self.stop.is_set():
                    self._judge()


def warm_up(
    call: Callable[[bytes], Outcome],
    bodies: list[bytes],
    *,
    concurrency: int = 1,
    max_requests: int,
    max_seconds: float | None = None,
    tolerance: float = STABILITY_TOLERANCE,
) -> dict[str, Any]:
    """Warm one shape; returns what was done (the warmup is part of the result).

    Stops when stable, after ``max_requests`` requests, or after ``max_seconds``; a shape that
    never answered successfully has ``successes == 0`` (the caller decides whether that fails).
    """
    started = time.perf_counter()
    first = call(bodies[0])
    first_success_s = first.latency_ms / 1000 if first.error is None else None
    window = window_size(concurrency)
    loop = _Closed(
        call,
        bodies,
        budget=max(0, max_requests - 1),
        window=window,
        tolerance=tolerance,
        deadline=None if max_seconds is None else started + max_seconds,
    )
    threads = [
        threading.Thread(target=loop.client, args=(i + 1,), name=f"warmup-{i}", daemon=True)
        for i in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stable, reason, medians = loop.reason == "stable", loop.reason, loop.medians
    outcomes = [first, *loop.outcomes]
    successes = [o.latency_ms for o in outcomes if o.error is None]
    if first_success_s is None and loop.first_success_at is not None:
        first_success_s = loop.first_success_at - started
    errors = count_kinds([o.error for o in outcomes])
    last_error = next((o.message for o in reversed(outcomes) if o.error), None)
    return {
        "concurrency": concurrency,
        "window": window,
        "requests": len(outcomes),
        "successes": len(successes),
        "first_ms": round(first.latency_ms, 3),
        "first_error": first.error,
        "first_retries": first.retries,
        "time_to_first_success_s": None if first_success_s is None else round(first_success_s, 3),
        "last_ms": round(medians[-1], 3) if medians else (round(successes[-1], 3) if successes else None),
        "window_medians_ms": [round(m, 3) for m in medians],
        "stable": stable,
        "stop_reason": reason,
        "timeouts": sum(n for kind, n in errors.items() if kind in TIMEOUT_KINDS),
        "errors": errors,
        "retries": sum(o.retries for o in outcomes),
        "last_error": last_error[:500] if last_error else None,
        "seconds": round(time.perf_counter() - started, 3),
    }
