"""The first process of a bound child's process group: it runs the command and ends the group with its owner.

Started as ``python -I guardian.py LIFELINE_FD -- COMMAND...`` by :func:`workflows.processes.lifeline.bound`,
in a session of its own, so the group's id is its pid. It holds the read end of its owner's lifeline
pipe: the write end is open only in the owner, so the read sees end-of-file the moment the owner is
gone, however it ended (SIGKILL and the out-of-memory killer included), and the guardian then kills
its whole group. A pipe, not ``PR_SET_PDEATHSIG``: that fires when the *thread* that forked exits,
and the engine forks from short-lived request threads.

When the command ends, the guardian kills what it left in the group (an MMS JVM outlives its CLI)
and ends as the command did: the same exit status, or the same signal, so callers that read the
status (a memory kill is SIGKILL) see the command's. It imports only the standard library and runs
isolated (``-I``): it starts with the command's environment, which may point at another Python's
packages.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, from /proc."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(name))
    return members


def kill_others(pgid: int) -> None:
    """SIGKILL every member of the group but this process, until none is left (or 5 s pass)."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        others = [pid for pid in group_members(pgid) if pid != os.getpid()]
        if not others:
            return
        for pid in others:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def watch(fd: int) -> None:
    """Block until the owner's end of the lifeline closes, then kill the whole group (this process too).

    The descriptor's open file may be shared and made non-blocking by another reader: wait in
    ``select``, and read only what it says is ready.
    """
    while True:
        try:
            select.select([fd], [], [])
            if not os.read(fd, 1024):
                break
        except (InterruptedError, BlockingIOError):
            continue
        except OSError:
            break
    os.killpg(os.getpgrp(), signal.SIGKILL)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: guardian.py LIFELINE_FD -- COMMAND...\n")
        return 2
    fd = int(argv[1])
    threading.Thread(target=watch, args=(fd,), daemon=True).start()
    child = subprocess.Popen(argv[3:])

    def forward(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    code = child.wait()
    kill_others(os.getpgrp())
    if code < 0:
        if -code in FORWARDED:
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        time.sleep(1.0)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
