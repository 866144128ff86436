"""How many requests each measurement needs, and how long that takes here: the plan printed before measuring.

A measurement's figures rest on the requests of its last three windows. p99 has a distribution-free
95% upper bound only from 299 samples on, and fewer than ``min_requests`` can never be stable, so
the kept windows must hold ``max(299, min_requests)`` requests. With windows sized by request count
(Triton perf_analyzer's ``count_windows``), each window closes once it holds a third of that; with
windows sized by time, a window is ``min_duration_s / 3`` whatever it holds. ``auto`` closes a
window when it has both.

How long a measurement takes follows from the throughput the warm-up measured in its last window:
``concurrency / latency`` requests per second at the warm-up's clients. A server runs at most its
workers' worth of requests at once, so ``c`` clients get ``min(c, workers) / min(warm clients,
workers)`` of that throughput: one worker answers one client as fast as four.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from workflows.benchmark.stats import STABILITY_WINDOWS, samples_for_upper_bound

Windows = Literal["auto", "time", "count"]
P99_SAMPLES = samples_for_upper_bound(0.99)
MIN_WINDOW_S = 0.2


def target_requests(min_requests: int) -> int:
    """Requests the kept windows must hold: p99's upper bound needs 299, stability ``min_requests``."""
    return max(P99_SAMPLES, min_requests)


def window_requests(windows: Windows, min_requests: int) -> int:
    """Requests that close one window (0: windows close on time alone)."""
    return 0 if windows == "time" else math.ceil(target_requests(min_requests) / STABILITY_WINDOWS)


def window_seconds(windows: Windows, min_duration_s: float) -> float:
    """The time that closes one window (count windows only keep a floor against sub-second noise)."""
    return MIN_WINDOW_S if windows == "count" else max(min_duration_s / STABILITY_WINDOWS, MIN_WINDOW_S)


@dataclass(frozen=True)
class MeasurementPlan:
    """One shape at one concurrency: what it needs, how long that should take, and what its cap allows."""

    label: str
    concurrency: int
    requests_per_s: float
    target_n: int
    needed_s: float
    cap_s: float
    expected_n: int

    @property
    def reaches(self) -> bool:
        return self.expected_n >= self.target_n

    @property
    def planned_s(self) -> float:
        return min(self.needed_s, self.cap_s)

    @property
    def name(self) -> str:
        return f"{self.label} c{self.concurrency}"


def plan_measurement(
    label: str,
    *,
    warm_ms: float,
    warm_clients: int,
    workers: int,
    concurrency: int,
    windows: Windows,
    min_duration_s: float,
    min_requests: int,
    max_duration_s: float,
) -> MeasurementPlan:
    """The plan of one measurement from its shape's warm latency (the median of the last warm window)."""
    parallel = max(1, workers)
    warm_rate = warm_clients / (warm_ms / 1000)
    rate = warm_rate * min(concurrency, parallel) / min(warm_clients, parallel)
    target = target_requests(min_requests)
    window_s = window_seconds(windows, min_duration_s)
    if windows == "time":
        # Time windows keep three windows of min_duration_s / 3, whatever they hold.
        needed = max(min_duration_s, STABILITY_WINDOWS * window_s)
        kept = int(STABILITY_WINDOWS * window_s * rate)
        expected = kept if needed <= max_duration_s else int(max_duration_s * rate)
        return MeasurementPlan(label, concurrency, rate, target, needed, max_duration_s, min(expected, kept))
    per_window = max(window_requests(windows, min_requests) / rate, window_s)
    needed = max(min_duration_s, STABILITY_WINDOWS * per_window)
    expected = target if needed <= max_duration_s else int(max_duration_s * rate)
    return MeasurementPlan(label, concurrency, rate, target, needed, max_duration_s, min(expected, target))


def duration_text(seconds: float) -> str:
    """``3 min 10 s``, ``41 s``."""
    whole = math.ceil(seconds)
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def plan_lines(plans: list[MeasurementPlan], *, shapes: int, windows: Windows) -> list[str]:
    """What the run will measure and how long it should take, then one line for what it cannot bound."""
    if not plans:
        return []
    total = sum(p.planned_s for p in plans)
    slowest = max(plans, key=lambda p: p.planned_s)
    head = (
        f"{shapes} shape{'s' if shapes != 1 else ''}, {len(plans)} measurement{'s' if len(plans) != 1 else ''}, about {duration_text(total)} ({windows} windows); "
        f"{slowest.name} needs {duration_text(slowest.needed_s)} for n={slowest.target_n}"
    )
    short = [p for p in plans if not p.reaches]
    if not short:
        return [head]
    parts = [
        f"{p.name} reaches about n={p.expected_n} of {p.target_n} in max_duration_s {p.cap_s:g} s "
        f"(needs {duration_text(p.needed_s)})"
        for p in short
    ]
    return [head, "not bounded within the budget: " + "; ".join(parts)]
