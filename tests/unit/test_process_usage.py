"""A process group's CPU and memory over a window, from /proc: what a local measurement's
utilisation is made of (the serving group's own figures, not an instance's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workflows.container.environment import CACHE_ENV
from workflows.processes import groups
from workflows.processes.usage import CLOCK_TICKS, Reading, UsageSampler, usage_between


def test_a_group_that_burns_cpu_reads_above_zero_and_holds_memory() -> None:
    # Given a child in a process group of its own that burns CPU for 0.4 s, then idles (the group is
    # its alone: this test's own group may hold other busy test workers)
    child = subprocess.Popen(
        [sys.executable, "-c", BURN_THEN_IDLE], start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "started"
        # When a sampler reads that group every 50 ms over the burn
        sampler = UsageSampler([child.pid], interval_s=0.05).start()
        started = time.time()
        time.sleep(0.5)
        ended = time.time()
        sampler.stop()
    finally:
        child.kill()
        child.wait()
    usage = sampler.window(started, ended)
    # Then the window read CPU above zero (at most all cores) and the child's resident memory
    assert usage is not None
    assert 0.0 < usage.cpu_pct <= 100.0
    assert usage.memory_pct > 0.0
    assert usage.started_at <= started < ended <= usage.ended_at


BURN_THEN_IDLE = """
import time
print("started", flush=True)
deadline = time.process_time() + 0.4
while time.process_time() < deadline:
    sum(i * i for i in range(1000))
time.sleep(30)
"""


def test_a_window_no_reading_brackets_has_no_usage() -> None:
    # Given a sampler started and stopped at once (its first and last readings only)
    sampler = UsageSampler([os.getpgrp()], interval_s=60.0).start()
    sampler.stop()
    first, last = sampler.readings[0].at, sampler.readings[-1].at
    # When a window starting before its first reading, and one ending after its last, are asked for
    # Then neither has a figure, while the span between the two readings has one
    assert sampler.window(first - 1, last) is None
    assert sampler.window(first, last + 10) is None
    assert sampler.window(first, last) is not None


def test_a_member_that_exits_does_not_take_cpu_below_zero_and_a_new_one_counts_from_zero() -> None:
    # Given two readings 1 s apart on 4 cores: pid 1 used 2 s more, pid 2 exited, pid 3 was born
    # with 1 s used, and the group held 1 GiB then 3 GiB of 8 GiB
    gib = 1 << 30
    first = Reading(at=100.0, ticks={1: 10 * CLOCK_TICKS, 2: 50 * CLOCK_TICKS}, rss_bytes=gib)
    last = Reading(at=101.0, ticks={1: 12 * CLOCK_TICKS, 3: 1 * CLOCK_TICKS}, rss_bytes=3 * gib)
    # When the usage between them is taken
    usage = usage_between(first, last, [], cores=4, memory=8 * gib)
    # Then CPU is 3 core-seconds of 4 in 1 s (75%), and memory the mean 2 GiB of 8 (25%)
    assert usage.cpu_pct == 75.0
    assert usage.memory_pct == 25.0


def test_an_endpoints_serving_groups_are_its_live_recorded_containers_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given this process recorded as a container group of endpoint ep-a, and a record of ep-b
    # and one of ep-a whose leader start time is another process's (a reused group id)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    pgid = os.getpid()
    groups.record(pgid, what="container ep-a/primary")
    folder = groups.registry()
    (folder / "1.json").write_text(json.dumps({"pgid": 1, "leader_start": -1, "what": "container ep-a/x"}))
    (folder / "2.json").write_text(
        json.dumps({"pgid": pgid, "leader_start": groups.start_time(pgid), "what": "container ep-b/primary"})
    )
    # When the groups serving ep-a, and those of an endpoint with none, are asked for
    # Then ep-a has only its live group, and the other none
    assert groups.serving("ep-a") == [pgid]
    assert groups.serving("ep-c") == []
