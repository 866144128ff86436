"""The time the workflow sees.

On AWS it is the wall clock. The local engine skips through Wait states and retry intervals
(a 10-minute Wait takes a fraction of a second), and advances this clock by the time it
skipped, so that waited-for durations, stall thresholds and the local SageMaker's timestamps
all agree in simulated time.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

_lock = threading.Lock()
_skipped_s = 0.0


def now() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=_skipped_s)


def skipped_seconds() -> float:
    """Simulated seconds added so far (0 on AWS)."""
    return _skipped_s


def advance(seconds: float) -> None:
    """Move simulated time forward; only the local engine calls this."""
    global _skipped_s
    if seconds > 0:
        with _lock:
            _skipped_s += seconds


def reset() -> None:
    global _skipped_s
    with _lock:
        _skipped_s = 0.0
