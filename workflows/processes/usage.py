"""What a process group used: its CPU (of all this host's cores) and resident memory (of its RAM), from /proc.

A ``UsageSampler`` reads a group every ``interval_s`` on its own thread and keeps the readings, so
any window inside its life (a benchmark measurement's ``started_at``..``ended_at``) can be
averaged afterwards, the way CloudWatch's per-instance metrics are read after a measurement on AWS.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from workflows.processes.guardian import group_members

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Reading:
    """One look at a group: each member's CPU ticks (utime + stime) and the group's resident bytes."""

    at: float
    """Epoch seconds."""
    ticks: dict[int, int]
    rss_bytes: int


@dataclass(frozen=True)
class Usage:
    """A window's averages: CPU as % of all ``os.cpu_count()`` cores, memory as % of MemTotal."""

    cpu_pct: float
    memory_pct: float
    started_at: float
    ended_at: float


def memory_total_bytes() -> int:
    """MemTotal of /proc/meminfo."""
    with open("/proc/meminfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise OSError("/proc/meminfo has no MemTotal line")


def read_group(pgid: int, *, members: Callable[[int], list[int]] = group_members) -> Reading:
    """The group's members' CPU ticks and their summed RSS now (a member gone meanwhile is skipped)."""
    ticks: dict[int, int] = {}
    rss = 0
    at = time.time()
    for pid in members(pgid):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command's ")": state is field 3, so utime (14), stime (15), rss (24) sit at 11, 12, 21.
        ticks[pid] = int(fields[11]) + int(fields[12])
        rss += int(fields[21]) * PAGE_BYTES
    return Reading(at=at, ticks=ticks, rss_bytes=rss)


def usage_between(first: Reading, last: Reading, middle: list[Reading], *, cores: int, memory: int) -> Usage:
    """CPU from ``first`` to ``last``; memory averaged over every reading from ``first`` to ``last``.

    A member that exits during the window takes its ticks with it (they are not its parent's until
    reaped), so CPU counts each member's own growth, and a member born in it from zero.
    """
    elapsed = max(last.at - first.at, 1e-9)
    used = sum(t - first.ticks.get(pid, 0) for pid, t in last.ticks.items() if t >= first.ticks.get(pid, 0))
    readings = [first, *middle, last]
    return Usage(
        cpu_pct=round(100.0 * used / CLOCK_TICKS / elapsed / cores, 2),
        memory_pct=round(100.0 * sum(r.rss_bytes for r in readings) / len(readings) / memory, 2),
        started_at=first.at,
        ended_at=last.at,
    )


class UsageSampler:
    """Reads process groups (one host's, summed) every ``interval_s`` on a daemon thread until ``stop``."""

    def __init__(self, pgids: list[int], *, interval_s: float = 1.0) -> None:
        self.pgids = list(pgids)
        self.interval_s = interval_s
        self.cores = os.cpu_count() or 1
        self.memory = memory_total_bytes()
        self.readings: list[Reading] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="process-usage")

    def start(self) -> UsageSampler:
        self._take()
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the thread, with a last reading (the last window's end)."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval_s + 5.0)
        self._take()

    def _take(self) -> None:
        parts = [read_group(pgid) for pgid in self.pgids]
        reading = Reading(
            at=time.time(),
            ticks={pid: t for part in parts for pid, t in part.ticks.items()},
            rss_bytes=sum(part.rss_bytes for part in parts),
        )
        with self._lock:
            self.readings.append(reading)

    def _loop(self) -> None:
        while not self._stopped.wait(self.interval_s):
            self._take()

    def window(self, started_at: float, ended_at: float) -> Usage | None:
        """The averages from the last reading at or before ``started_at`` to the first at or after
        ``ended_at`` (a window shorter than ``interval_s`` still gets a figure, over a little more
        than itself); None where no reading brackets it."""
        with self._lock:
            readings = list(self.readings)
        before = [i for i, r in enumerate(readings) if r.at <= started_at]
        after = [i for i, r in enumerate(readings) if r.at >= ended_at]
        if not before or not after:
            return None
        first, last = before[-1], after[0]
        return usage_between(
            readings[first], readings[last], readings[first + 1 : last], cores=self.cores, memory=self.memory
        )
