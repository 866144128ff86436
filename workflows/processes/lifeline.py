"""Bind a child process group to this process's life: it ends when this process ends, even on SIGKILL.

Each process holds one lifeline pipe for as long as it lives. Its write end is never inherited
(``os.pipe`` descriptors are not, and ``subprocess`` closes the rest), so it closes exactly when
this process is gone, and every reader of the other end sees end-of-file then:

* :func:`bound` wraps a command in ``guardian.py``, which reads the lifeline and kills its process
  group on end-of-file (a local container, a processing job: commands that are not deploybench's);
* :func:`watch_from_environment` is the same watch, by SIGIO, inside a deploybench child that needs no
  guardian process (the bounded conversion pass, whose own memory and status its parent reads).
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import threading
from pathlib import Path

GUARDIAN = Path(__file__).with_name("guardian.py")
LIFELINE_ENV = "DEPLOYBENCH_LIFELINE_FD"

_lock = threading.Lock()
_pipe: tuple[int, int] | None = None
_owner: int | None = None


def read_end() -> int:
    """The read end of this process's lifeline (created on first use; a forked child gets its own)."""
    global _pipe, _owner
    with _lock:
        if _pipe is None or _owner != os.getpid():
            # After a fork the inherited pipe is the parent's: a child binds its own children to itself.
            _pipe, _owner = os.pipe(), os.getpid()
        return _pipe[0]


def bound(command: list[str]) -> tuple[list[str], tuple[int, ...]]:
    """``command`` run under the guardian, and the descriptor ``Popen`` must pass (``pass_fds``).

    Start it with ``start_new_session=True``: the guardian kills its process group, which must be
    the command's alone.
    """
    fd = read_end()
    return [sys.executable, "-I", str(GUARDIAN), str(fd), "--", *command], (fd,)


def child_environment(env: dict[str, str]) -> tuple[dict[str, str], tuple[int, ...]]:
    """``env`` naming the lifeline for :func:`watch_from_environment`, and the ``pass_fds`` to give."""
    fd = read_end()
    return {**env, LIFELINE_ENV: str(fd)}, (fd,)


def watch_from_environment() -> None:
    """In a child started with :func:`child_environment`: end this process once the parent is gone.

    No thread: the kernel signals it. The lifeline is put in async mode owned by this process, so
    its end-of-file raises SIGIO, whose default action ends the process. A thread would reserve
    address space that a child under RLIMIT_AS (the bounded pass) cannot spare.
    """
    value = os.environ.pop(LIFELINE_ENV, "")
    if not value.isdigit():
        return
    inherited = int(value)
    # An open file of its own for the pipe: async mode and non-blocking are flags of the open file,
    # and the inherited one is shared with every guardian's watch.
    fd = os.open(f"/proc/self/fd/{inherited}", os.O_RDONLY | os.O_NONBLOCK)
    os.close(inherited)
    signal.signal(signal.SIGIO, signal.SIG_DFL)
    fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    try:
        gone = os.read(fd, 1) == b""
    except BlockingIOError:
        gone = False
    if gone:  # the parent ended before the watch was set: no edge will come
        os.killpg(os.getpgrp(), signal.SIGKILL)
