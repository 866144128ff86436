"""Scale Wait states and Retry intervals of moto's interpreter; advance the simulated clock.

A Wait of N seconds really waits N / scale and moves ``workflows.clock`` forward by the rest, so
handlers and the local SageMaker see the full N seconds pass. While real local work is under way
(``clock.busy()``: a container starting, a processing job running) the wait passes in real time,
in short slices, until the work ends; only the idle remainder is skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

from workflows import clock

BUSY_SLICE_S = 0.25


class TimeScale:
    """Context manager installing the scaled waits."""

    def __init__(self, scale: float) -> None:
        if scale < 1:
            raise ValueError("time scale must be at least 1 (1 = real time)")
        self.scale = scale
        self._saved: tuple[Any, Any] | None = None

    def pass_time(self, seconds: float, sleep: Callable[[float], Any]) -> None:
        """Let ``seconds`` of simulated time pass: real time while busy, scaled when idle."""
        remaining = float(seconds)
        while remaining > 0 and clock.busy():
            step = min(BUSY_SLICE_S, remaining)
            if sleep(step):  # interrupted (the execution was stopped)
                return
            remaining -= step
        if remaining > 0:
            real = remaining / self.scale
            sleep(real)
            clock.advance(remaining - real)

    def sleep(self, seconds: float) -> None:
        self.pass_time(seconds, time.sleep)

    def __enter__(self) -> TimeScale:
        scale = self

        def wait_interval(function: Any, env: Any, wait_seconds: int) -> None:
            scale.pass_time(wait_seconds, env.program_state_event.wait)

        self._saved = (WaitFunction._wait_interval, retrier_decl.time)
        WaitFunction._wait_interval = wait_interval  # type: ignore[method-assign,assignment]
        retrier_decl.time = SimpleNamespace(sleep=self.sleep, time=time.time)  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved:
            WaitFunction._wait_interval, retrier_decl.time = self._saved  # type: ignore[method-assign]
