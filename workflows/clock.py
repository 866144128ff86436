"""The time the workflow sees.

On AWS it is the wall clock. The local engine skips through Wait states and retry intervals
(a 10-minute Wait takes a fraction of a second), and advances this clock by the time it
skipped, so that waited-for durations, stall thresholds and the local SageMaker's timestamps
all agree in simulated time.

Only idle time is skipped. While something real is under way locally (a container starting, a
processing job running: ``with clock.real_work(): ...``), waits pass in real time, so a local
endpoint that really takes a minute to start is seen to take a minute, not hours of skipped
polling intervals.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

_lock = threading.Lock()
_skipped_s = 0.0
_real_work = 0


def now() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=_skipped_s)


def as_datetime(value: Any) -> datetime | None:
    """A timestamp as an aware datetime, from what boto3 parses (datetime), what the execution state
    holds (ISO text) or epoch seconds; None for anything else."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


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
    global _skipped_s, _real_work
    with _lock:
        _skipped_s = 0.0
        _real_work = 0


@contextlib.contextmanager
def real_work() -> Iterator[None]:
    """Mark real local work in progress: no time is skipped until it ends."""
    global _real_work
    with _lock:
        _real_work += 1
    try:
        yield
    finally:
        with _lock:
            _real_work -= 1


def busy() -> bool:
    """True while real local work is in progress."""
    return _real_work > 0
