"""The local engine skips idle waiting only: real local work is waited for in real time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workflows import clock
from workflows.local.timing import TimeScale


@pytest.fixture(autouse=True)
def _fresh_clock():
    clock.reset()
    yield
    clock.reset()


def test_an_idle_wait_sleeps_a_fraction_and_advances_the_clock_by_the_rest():
    slept: list[float] = []
    before = clock.now()
    TimeScale(scale=100).pass_time(600, slept.append)
    assert slept == [6.0]
    assert (clock.now() - before).total_seconds() == pytest.approx(594, abs=1)


def test_a_wait_during_real_work_passes_in_real_slices_and_skips_nothing():
    slept: list[float] = []
    with clock.real_work():
        assert clock.busy()
        TimeScale(scale=100).pass_time(1.0, slept.append)
    assert not clock.busy()
    assert sum(slept) == pytest.approx(1.0)
    assert max(slept) <= 0.25
    assert clock.now().timestamp() == pytest.approx(datetime.now(UTC).timestamp(), abs=1)


def test_work_ending_mid_wait_lets_the_remainder_be_skipped():
    slept: list[float] = []
    work = clock.real_work()
    work.__enter__()

    def sleep(seconds: float) -> bool:
        slept.append(seconds)
        if len(slept) == 2:
            work.__exit__(None, None, None)
        return False

    TimeScale(scale=10).pass_time(100.5, sleep)
    assert slept[:2] == [0.25, 0.25]
    assert slept[2:] == [pytest.approx(100.0 / 10)]


def test_a_stopped_execution_interrupts_a_busy_wait():
    calls: list[float] = []
    with clock.real_work():
        TimeScale(scale=10).pass_time(60, lambda s: calls.append(s) or True)
    assert calls == [0.25]
