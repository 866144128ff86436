"""SIGTERM and SIGHUP stop a run as Ctrl-C does: an exception in the main thread, so teardown runs.

Python turns SIGINT into ``KeyboardInterrupt``; SIGTERM (a CI cancel, ``timeout``, ``docker stop``,
systemd) and SIGHUP (a closed terminal) kill the process at once by default, leaving every
endpoint process running. Inside :func:`signals_raise` all three raise
:class:`~workflows.errors.RunInterrupted` instead. Once teardown has begun (:meth:`Guard.hold`), a
further signal is noted and not raised: a second Ctrl-C must not cut the teardown short.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from workflows.errors import RunInterrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Guard:
    """What the handlers do: raise the first signal, then (held) only note the later ones."""

    def __init__(self) -> None:
        self.held = False
        self.received: list[int] = []

    def hold(self) -> None:
        """From now on teardown runs to its end: signals are noted, not raised."""
        self.held = True

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if self.held:
            return
        self.held = True
        raise RunInterrupted(signum)


@contextlib.contextmanager
def signals_raise() -> Iterator[Guard]:
    """SIGINT, SIGTERM and SIGHUP raise ``RunInterrupted`` while the block runs (main thread only)."""
    guard = Guard()
    if threading.current_thread() is not threading.main_thread():
        # Handlers can only be installed from the main thread; elsewhere the defaults stay.
        yield guard
        return
    previous = {signum: signal.signal(signum, guard.handle) for signum in SIGNALS}
    try:
        yield guard
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
