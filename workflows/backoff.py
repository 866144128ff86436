"""Exponential backoff, capped: the one schedule every poll and retry of the project follows.

The endpoint poll (``wait.poll_initial_s`` x ``wait.backoff`` up to ``wait.poll_max_s``), the
benchmark client's retries of "no capacity" (F12: the field needed 471 s and 95 retries), the
scale-out measurement's requests and the run-lifetime bound on a Step Functions retrier
(IntervalSeconds x BackoffRate^n, each capped at MaxDelaySeconds) are all this schedule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """``initial_s``, ``initial_s * factor``, ``initial_s * factor**2`` ... each capped at ``maximum_s``.

    Attributes:
        initial_s: the first delay, seconds (before attempt 1).
        factor: what each delay is multiplied by for the next one (1 keeps it constant).
        maximum_s: no single delay is longer (``math.inf``: uncapped, as a Step Functions retrier
            without MaxDelaySeconds).
    """

    initial_s: float
    factor: float
    maximum_s: float = math.inf

    def __post_init__(self) -> None:
        problems = [
            f"{name} is {value!r}; {accepted}"
            for name, value, ok, accepted in (
                ("initial_s", self.initial_s, self.initial_s >= 0, "it must be 0 or more seconds"),
                (
                    "factor",
                    self.factor,
                    self.factor >= 1,
                    "it must be 1 or more (1 keeps the delay constant)",
                ),
                ("maximum_s", self.maximum_s, self.maximum_s >= 0, "it must be 0 or more seconds"),
            )
            if not ok  # NaN fails every comparison, so it is refused too
        ]
        if problems:
            raise ValueError(f"invalid backoff: {'; '.join(problems)}.")

    def delay_s(self, attempt: int) -> float:
        """Seconds to wait before attempt number ``attempt`` (1-based; 0 and below read as 1)."""
        try:
            delay = self.initial_s * self.factor ** max(0, attempt - 1)
        except OverflowError:  # a long poll at a factor > 1: far past any cap
            return self.maximum_s
        return min(self.maximum_s, delay)

    def whole_seconds(self, attempt: int) -> int:
        """``delay_s`` rounded to whole seconds (a Step Functions Wait takes whole seconds)."""
        return int(round(self.delay_s(attempt)))

    def total_s(self, attempts: int) -> float:
        """The sum of the delays before attempts 1 to ``attempts``."""
        return sum(self.delay_s(attempt) for attempt in range(1, attempts + 1))
