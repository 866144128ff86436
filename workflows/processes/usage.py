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
    """Reads one process group every ``interval_s`` on a daemon thread until ``stop``."""

    def __init__(self, pgid: int, *, interval_s: float = 1.0) -> None:
        self.pgid = pgid
        self.interval_s = interval_s
        self.cores = os.cpu_count() or 1
        self.memory = memory_total_bytes()
        self.readings: list[Reading] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name=f"usage-{pgid}")

    def start(self) -> UsageSampler:
        self._take()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval_s + 5.0)

    def _take(self) -> None:
        reading = read_group(self.pgid)
        with self._lock:
            self.readings.append(reading)

    def _loop(self) -> None:
        while not self._stopped.wait(self.interval_s):
            self._take()

    def sample_now(self) -> None:
        """Take a reading at once (a window's end that should not wait for the next tick)."""
        self._take()

    def window(self, started_at: float, ended_at: float) -> Usage | None:
        """The averages over the readings inside ``started_at``..``ended_at``; None: fewer than two."""
        with self._lock:
            inside = [r for r in self.readings if started_at <= r.at <= ended_at]
        if len(inside) < 2:
            return None
        return usage_between(inside[0], inside[-1], inside[1:-1], cores=self.cores, memory=self.memory)
