"""The routed shape's calls: one direct and one routed call per round, the order alternating.

Shipped to the benchmark processing job with the engine (``workflows.benchmark.JOB_MODULES``): the
standard library only. The figures made of these calls are ``workflows.benchmark.routed``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RoutedCall:
    """One routed request: its latency, and which destination served it and why (the response's headers)."""

    latency_ms: float
    destination: str
    reason: str


def measure_routed(
    direct: Callable[[], object], routed: Callable[[], tuple[str, str]], rounds: int
) -> tuple[list[float], list[RoutedCall]]:
    """``rounds`` calls each way, one of each per round, the order alternating round by round.

    Args:
        direct: makes one direct call (its answer is not read).
        routed: makes one routed call; returns the serving destination and the routing reason.
        rounds: calls each way.
    """
    direct_ms: list[float] = []
    calls: list[RoutedCall] = []
    for index in range(rounds):
        for way in ("direct", "routed") if index % 2 == 0 else ("routed", "direct"):
            started = time.perf_counter()
            if way == "direct":
                direct()
                direct_ms.append((time.perf_counter() - started) * 1000)
            else:
                destination, reason = routed()
                calls.append(RoutedCall((time.perf_counter() - started) * 1000, destination, reason))
    return direct_ms, calls
