"""One backoff: the schedule itself, and that the endpoint poll, the benchmark client's retries, the
scale-out measurement and the lifetime bound on a Step Functions retrier all follow it."""

from __future__ import annotations

import inspect
import math

import pytest

from workflows.backoff import Backoff
from workflows.benchmark.policy import ClientPolicy, policy_for
from workflows.hosting import scale_timing
from workflows.hosting.polling import next_wait_seconds
from workflows.janitor.lifetime import _retry_intervals_s


def test_the_delays_grow_by_the_factor_from_the_first_and_stop_at_the_cap() -> None:
    # Given a schedule of 2 s doubling up to 10 s
    schedule = Backoff(2.0, 2.0, 10.0)
    # When the first six delays are read
    delays = [schedule.delay_s(attempt) for attempt in range(1, 7)]
    # Then they double from 2 s and never pass 10 s
    assert delays == [2.0, 4.0, 8.0, 10.0, 10.0, 10.0]
    # And attempt 0 or below reads as the first
    assert schedule.delay_s(0) == schedule.delay_s(-3) == 2.0


def test_a_factor_of_one_keeps_the_delay_and_no_cap_lets_it_grow() -> None:
    # Given a constant schedule and an uncapped one
    constant, uncapped = Backoff(3.0, 1.0, 10.0), Backoff(1.0, 3.0)
    # Then the constant one never changes and the uncapped one grows without bound
    assert {constant.delay_s(n) for n in range(1, 20)} == {3.0}
    assert uncapped.delay_s(5) == 81.0
    assert uncapped.maximum_s == math.inf


def test_a_very_long_poll_is_capped_instead_of_overflowing() -> None:
    # Given a capped schedule read at an attempt whose power is past a float's range
    schedule = Backoff(15.0, 1.5, 120.0)
    # When the delay is read
    # Then it is the cap (1.5 ** 100000 alone raises OverflowError)
    assert schedule.delay_s(100_000) == 120.0
    assert schedule.whole_seconds(100_000) == 120


def test_whole_seconds_rounds_and_total_sums_the_delays() -> None:
    # Given 15 s growing by 1.5 up to 120 s
    schedule = Backoff(15.0, 1.5, 120.0)
    # Then whole seconds round each delay (22.5 -> 22, 33.75 -> 34) and the total adds them
    assert [schedule.whole_seconds(n) for n in range(1, 7)] == [15, 22, 34, 51, 76, 114]
    assert schedule.total_s(3) == 15.0 + 22.5 + 33.75
    assert schedule.total_s(0) == 0


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"initial_s": -1.0, "factor": 2.0}, "initial_s is -1.0"),
        ({"initial_s": 1.0, "factor": 0.5}, "factor is 0.5"),
        ({"initial_s": 1.0, "factor": 2.0, "maximum_s": -5.0}, "maximum_s is -5.0"),
        ({"initial_s": math.nan, "factor": 2.0}, "initial_s is nan"),
    ],
)
def test_a_schedule_that_would_shrink_or_go_negative_is_refused_naming_the_field(
    arguments: dict[str, float], field: str
) -> None:
    # When a schedule is built with one bad value
    with pytest.raises(ValueError) as raised:
        Backoff(**arguments)
    # Then the error names the field, its value and what it accepts
    assert field in str(raised.value)
    assert "must be" in str(raised.value)


def test_the_endpoint_poll_waits_follow_the_schedule_in_whole_seconds() -> None:
    # Given the poll settings of a spec (initial 15 s, x1.5, at most 120 s)
    schedule = Backoff(15, 1.5, 120)
    # Then every poll's wait is the schedule's delay for that poll, in whole seconds
    assert [next_wait_seconds(n, initial=15, maximum=120, backoff=1.5) for n in range(1, 12)] == [
        schedule.whole_seconds(n) for n in range(1, 12)
    ]


def test_the_benchmark_client_retries_on_its_policy_s_schedule() -> None:
    # Given the scale-to-zero client policy (F12) and a custom one
    zero = policy_for("scale-to-zero")
    custom = ClientPolicy(retry_initial_s=0.5, retry_backoff=3.0, retry_max_s=4.0)
    # Then each policy's schedule is built from its retry fields
    assert zero.backoff == Backoff(zero.retry_initial_s, zero.retry_backoff, zero.retry_max_s)
    assert [custom.backoff.delay_s(n) for n in range(1, 5)] == [0.5, 1.5, 4.0, 4.0]


def test_the_scale_out_measurement_retries_as_the_scale_to_zero_benchmark_does() -> None:
    # Given scale_out's default backoff
    backoff = inspect.signature(scale_timing.scale_out).parameters["backoff"].default
    # Then it is the scale-to-zero client policy's schedule: 1 s growing by 1.5 up to 10 s
    assert [backoff(n) for n in range(1, 9)] == [
        policy_for("scale-to-zero").backoff.delay_s(n) for n in range(1, 9)
    ]
    assert backoff(1) == 1.0 and backoff(7) == 10.0


def test_a_step_functions_retrier_s_waits_are_the_schedule_s_total() -> None:
    # Given a retrier of 5 s, rate 2, capped at 30 s, 4 attempts
    retrier = {"IntervalSeconds": 5, "BackoffRate": 2.0, "MaxDelaySeconds": 30, "MaxAttempts": 4}
    # Then the lifetime bound counts 5 + 10 + 20 + 30 seconds of waiting
    assert _retry_intervals_s(retrier) == 65.0
    # And without a cap the last wait is 40 s
    uncapped = {key: value for key, value in retrier.items() if key != "MaxDelaySeconds"}
    assert _retry_intervals_s(uncapped) == 75.0
