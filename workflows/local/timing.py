"""Scale Wait states and Retry intervals of moto's interpreter; advance the simulated clock.

A Wait of N seconds really waits N / scale and moves ``workflows.clock`` forward by the rest, so
handlers and the local SageMaker see the full N seconds pass.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

from workflows import clock


class TimeScale:
    """Context manager installing the scaled waits."""

    def __init__(self, scale: float) -> None:
        if scale < 1:
            raise ValueError("time scale must be at least 1 (1 = real time)")
        self.scale = scale
        self._saved: tuple[Any, Any] | None = None

    def sleep(self, seconds: float) -> None:
        real = seconds / self.scale
        time.sleep(real)
        clock.advance(seconds - real)

    def __enter__(self) -> TimeScale:
        scale = self

        def wait_interval(function: Any, env: Any, wait_seconds: int) -> None:
            real = wait_seconds / scale.scale
            if real > 0:
                env.program_state_event.wait(real)
            clock.advance(wait_seconds - real)

        self._saved = (WaitFunction._wait_interval, retrier_decl.time)
        WaitFunction._wait_interval = wait_interval  # type: ignore[method-assign,assignment]
        retrier_decl.time = SimpleNamespace(sleep=self.sleep, time=time.time)  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved:
            WaitFunction._wait_interval, retrier_decl.time = self._saved  # type: ignore[method-assign]
