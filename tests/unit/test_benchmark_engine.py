"""Warmup until stable, measurement in windows, the engine run, payloads.

The endpoint is simulated by call functions with known latencies (workers that load one after
another, a shape that compiles on its first calls): the algorithms under test are the real ones.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import boto3
import pytest

from tests.conftest import fast_spec
from workflows.benchmark.client import Invoker, Outcome
from workflows.benchmark.engine import EngineConfig, run
from workflows.benchmark.measure import measure
from workflows.benchmark.noop_endpoint import NoopEndpoint
from workflows.benchmark.payloads import Shape, bodies_for, payload
from workflows.benchmark.policy import policy_for
from workflows.benchmark.run_config import engine_config
from workflows.benchmark.sizing import Windows
from workflows.benchmark.warmup import stable_windows, warm_up

BODIES = [b"{}"]


def scripted(latency_of: Callable[[int], Outcome]) -> Callable[[bytes], Outcome]:
    """A call whose n-th request (0-based, in sending order) gets ``latency_of(n)``."""
    counter = itertools.count()
    lock = threading.Lock()

    def call(body: bytes) -> Outcome:
        with lock:
            number = next(counter)
        return latency_of(number)

    return call


def test_warmup_runs_until_latency_is_stable_not_a_fixed_count() -> None:
    # Given a shape whose first 12 calls are slow (a lazy load), then steady
    call = scripted(lambda n: Outcome(40.0 if n < 12 else 2.0))
    # When it is warmed
    result = warm_up(call, BODIES, concurrency=1, max_requests=500)
    # Then warmup went past the slow calls and stopped once three windows agreed
    assert result["stable"] and result["stop_reason"] == "stable"
    assert 12 + 15 <= result["requests"] < 60
    assert result["first_ms"] == 40.0
    assert result["last_ms"] == 2.0


def test_warmup_is_not_stable_before_the_last_worker_has_loaded() -> None:
    # Given 4 workers fed round robin that load one after another (F33): worker i is ready
    # 0.1 * i s after the start, and a request it gets before that waits for the load
    started = time.perf_counter()
    ready = [started + 0.1 * i for i in range(4)]
    counter = itertools.count()

    def call(body: bytes) -> Outcome:
        begin = time.perf_counter()
        worker = next(counter) % 4
        time.sleep(max(0.0, ready[worker] - begin) + 0.002)
        return Outcome((time.perf_counter() - begin) * 1000)

    # When the shape is warmed with as many clients as workers
    result = warm_up(call, BODIES, concurrency=4, max_requests=5000)
    # Then it was called stable only after the last worker had loaded
    assert result["stable"]
    assert result["seconds"] >= 0.3
    assert result["last_ms"] < 20


def test_stability_needs_clean_windows_agreeing_on_median_and_mean() -> None:
    steady = [Outcome(5.0)] * 15
    one_slow_in_four = [Outcome(300.0 if i % 4 == 0 else 5.0) for i in range(24)]
    with_error = [Outcome(5.0)] * 14 + [Outcome(5.0, "ModelError")]
    assert stable_windows(steady, 5)[0]
    assert not stable_windows(one_slow_in_four[:8] + [Outcome(5.0)] * 16, 8)[0]
    assert not stable_windows(with_error, 5)[0]
    assert not stable_windows(steady[:10], 5)[0]


def test_first_calls_that_time_out_while_compiling_are_tolerated_and_recorded() -> None:
    # Given a shape whose first two calls hit the 60 s limit while an engine compiles (F21)
    call = scripted(lambda n: Outcome(60_000.0, "ModelError", "timed out") if n < 2 else Outcome(15.0))
    result = warm_up(call, BODIES, concurrency=1, max_requests=200)
    assert result["stable"]
    assert (result["first_error"], result["timeouts"], result["errors"]) == (
        "ModelError",
        2,
        {"ModelError": 2},
    )
    assert result["time_to_first_success_s"] is not None


def test_a_shape_that_never_answers_is_reported_not_raised() -> None:
    call = scripted(lambda n: Outcome(1.0, "ModelError", "No module named 'onnxruntime'"))
    result = warm_up(call, BODIES, concurrency=2, max_requests=30)
    assert (result["successes"], result["stable"], result["stop_reason"]) == (0, False, "max_requests")
    assert result["requests"] == 30
    assert "onnxruntime" in result["last_error"]


def test_warmup_stops_at_its_time_limit() -> None:
    counter = itertools.count()

    def alternating(body: bytes) -> Outcome:
        time.sleep(0.005)
        return Outcome(1.0 if next(counter) // 5 % 2 else 10.0)  # windows alternate: never stable

    result = warm_up(alternating, BODIES, concurrency=1, max_requests=100_000, max_seconds=0.3)
    # It stopped for time, not for requests; how far past 0.3 s it got depends on the machine's load,
    # so only the side every CPU agrees on is asserted.
    assert result["stop_reason"] == "max_seconds"
    assert result["seconds"] >= 0.3 and result["requests"] < 100_000


def steady(seconds: float) -> Callable[[bytes], Outcome]:
    """An endpoint that takes ``seconds`` per call and reports that latency: a loaded or slow CPU
    stretches the sleep, not the latency the engine judges stability on."""

    def call(body: bytes) -> Outcome:
        time.sleep(seconds)
        return Outcome(seconds * 1000)

    return call


def test_a_measurement_meets_both_floors_and_keeps_its_windows_and_samples() -> None:
    # Given a steady endpoint of ~5 ms
    figures = measure(
        steady(0.005),
        BODIES,
        Shape(4, 16),
        concurrency=2,
        min_duration_s=0.9,
        min_requests=50,
        max_duration_s=10,
    )
    # Then it is stable, met the duration and count floors, and kept three windows' samples
    assert figures["stable"] and figures["stop_reason"] == "stable"
    assert figures["unstable_reason"] == ""
    assert figures["duration_s"] >= 0.85
    assert figures["requests"] >= 50
    assert len(figures["windows"]) >= 3 and figures["kept_windows"] == 3
    assert len(figures["latencies_ms"]) == figures["requests"] - figures["errors"]
    assert 5 <= figures["p50_ms"] <= figures["p90_ms"] <= figures["p99_ms"] <= figures["max_ms"]
    assert figures["samples_per_s"] == pytest.approx(4 * figures["requests_per_s"], rel=1e-3)
    assert figures["started_at"] < figures["ended_at"]


def test_errors_are_counted_by_kind() -> None:
    def call(body: bytes) -> Outcome:
        time.sleep(0.002)
        return next(kinds)

    kinds = itertools.cycle(
        [Outcome(2.0), Outcome(2.0), Outcome(1.0, "ThrottlingException"), Outcome(1.0, "ModelError")]
    )
    figures = measure(
        call,
        BODIES,
        Shape(1, "natural"),
        concurrency=1,
        min_duration_s=0.6,
        min_requests=10,
        max_duration_s=3,
    )
    assert set(figures["errors_by_kind"]) == {"ThrottlingException", "ModelError"}
    assert figures["errors"] == sum(figures["errors_by_kind"].values())


def test_a_drifting_endpoint_is_reported_unstable_at_the_ceiling() -> None:
    started = time.perf_counter()

    def drifting(body: bytes) -> Outcome:
        delay = 0.001 + (time.perf_counter() - started) * 0.02
        time.sleep(delay)
        return Outcome(delay * 1000)

    figures = measure(
        drifting, BODIES, Shape(1, 8), concurrency=1, min_duration_s=0.6, min_requests=5, max_duration_s=1.5
    )
    assert not figures["stable"]
    assert figures["stop_reason"] == "max_duration"
    assert "did not agree" in figures["unstable_reason"]


def test_a_shape_cut_short_below_min_requests_is_not_stable_and_says_why() -> None:
    # Given a steady but slow endpoint (~100 ms): three windows of 0.2 s hold about 6 requests
    # When it is measured with min_requests 30 and a ceiling of 1.5 s
    figures = measure(
        steady(0.1),
        BODIES,
        Shape(8, 128),
        concurrency=1,
        min_duration_s=0.6,
        min_requests=30,
        max_duration_s=1.5,
    )
    # Then the stopping rule did not hold: stable false, with the reason
    assert figures["stop_reason"] == "max_duration"
    assert not figures["stable"]
    assert "< min_requests 30" in figures["unstable_reason"]
    # And each percentile carries its interval: p99 from so few samples has no upper bound
    assert figures["p99_ci_ms"][1] is None
    low, high = figures["p50_ci_ms"]
    assert low is not None and high is not None and low <= figures["p50_ms"] <= high


def windowed(
    call: Callable[[bytes], Outcome], windows_by: Windows, *, max_duration_s: float
) -> dict[str, Any]:
    """One client measuring with a 0.3 s floor and min_requests 30, windows closed as asked."""
    return measure(
        call,
        BODIES,
        Shape(1, 16),
        concurrency=1,
        min_duration_s=0.3,
        min_requests=30,
        max_duration_s=max_duration_s,
        windows_by=windows_by,
    )


def test_count_windows_hold_the_requests_a_bounded_p99_needs() -> None:
    # Given a steady ~3 ms endpoint, measured with windows sized by request count and a short time floor
    figures = windowed(steady(0.003), "count", max_duration_s=20)
    # Then each kept window closed on its 100 requests, the three hold p99's 299, and p99 is bounded
    assert figures["stable"] and figures["windows_by"] == "count"
    assert figures["target_requests"] == 299
    assert all(w["requests"] >= 100 for w in figures["windows"][-3:])
    assert figures["requests"] >= 299
    assert figures["p99_ci_ms"][1] is not None


def test_time_windows_keep_the_old_rule_and_leave_p99_unbounded_when_short() -> None:
    # Given the same endpoint with windows of min_duration_s / 3 = 0.1 s (about 30 requests each)
    figures = windowed(steady(0.003), "time", max_duration_s=20)
    # Then it is stable on fewer than 299 requests, as before, and p99 has no upper bound
    assert figures["stable"] and figures["requests"] < 299
    assert figures["p99_ci_ms"][1] is None


def test_a_count_window_cut_by_the_ceiling_is_unstable_and_says_what_n_it_reached() -> None:
    # Given a ~20 ms endpoint and a 1.5 s ceiling: about 75 requests, short of 299
    figures = windowed(steady(0.02), "auto", max_duration_s=1.5)
    # Then the open window closed at the ceiling, the measurement is unstable and names the n it lacks
    assert figures["stop_reason"] == "max_duration" and not figures["stable"]
    assert "that p99's upper bound needs" in figures["unstable_reason"]
    assert figures["p99_ci_ms"][1] is None
    assert figures["duration_s"] <= 1.6


def test_the_engine_warms_and_measures_every_shape_and_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    config = EngineConfig(
        endpoint_name="ep",
        mode="realtime",
        batch_sizes=[1, 2],
        sequence_lengths=["natural"],
        concurrency=[1, 2],
        min_duration_s=0.3,
        min_requests=5,
        max_duration_s=1.0,
        warmup_max_requests=40,
        warmup_max_s=5,
        warmup_concurrency=2,
    )
    with NoopEndpoint() as endpoint:
        runtime = boto3.client("sagemaker-runtime", endpoint_url=endpoint.url, region_name="us-east-1")
        invoker = Invoker.from_client(runtime, "ep", policy=policy_for("realtime"))
        output = run(invoker, config, runner="test")
    assert [(w["batch_size"], w["concurrency"]) for w in output["warm_checks"]] == [(1, 2), (2, 2)]
    assert [(m["batch_size"], m["concurrency"]) for m in output["measurements"]] == [
        (1, 1),
        (1, 2),
        (2, 1),
        (2, 2),
    ]
    assert output["environment"]["endpoint_url"] == endpoint.url
    assert output["policy"] == policy_for("realtime").to_dict()
    assert EngineConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ValueError, match="unknown engine settings"):
        EngineConfig.from_dict({**config.to_dict(), "colour": "red"})


def test_payloads_send_batch_size_and_pad_fixed_lengths_deterministically() -> None:
    natural = json.loads(payload(Shape(8, "natural"), seed=3))
    fixed = json.loads(payload(Shape(2, 128), seed=3))
    assert natural["parameters"] == {"batch_size": 8} and len(natural["inputs"]) == 8
    assert fixed["parameters"] == {"batch_size": 2, "padding": "max_length", "max_length": 128}
    assert bodies_for(Shape(2, 128), 3) == bodies_for(Shape(2, 128), 3)
    assert len(set(bodies_for(Shape(2, 128), 3))) == len(bodies_for(Shape(2, 128), 3))
    assert payload(Shape(1, "natural"), seed=1) != payload(Shape(1, "natural"), seed=2)


def test_warmup_uses_at_least_one_client_per_worker_and_the_highest_concurrency() -> None:
    assert (
        engine_config(
            fast_spec("bundled", hosting={"workers": 4, "instance_count": 2}), "e"
        ).warmup_concurrency
        == 8
    )
    assert engine_config(fast_spec("bundled", benchmark={"concurrency": [1, 6]}), "e").warmup_concurrency == 6
