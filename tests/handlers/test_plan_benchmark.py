"""PlanBenchmark: where the load generator runs (this Lambda or a processing job), and the measurement
plan sized from the warm-up."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import fast_spec
from tests.handlers.test_benchmark_job import JOB, deploy_on
from workflows.benchmark.results import ShapeWarmup, WarmupResult
from workflows.benchmark.server_side import observability_line
from workflows.contracts import (
    BenchmarkPlan,
    BenchmarkPlanRequest,
)
from workflows.errors import SpecInvalid
from workflows.steps.plan_benchmark import plan


def plan_for(
    instance_type: str, warm_stop: str = "stable", last_ms: float = 1.0, **benchmark: Any
) -> BenchmarkPlan:
    spec = fast_spec("bundled", benchmark={"windows": "auto", **benchmark})
    warm = ShapeWarmup(
        batch_size=1,
        sequence_length="natural",
        requests=10,
        first_ms=1.0,
        last_ms=last_ms,
        stable=warm_stop == "stable",
        stop_reason=warm_stop,
    )
    request = BenchmarkPlanRequest(
        run_id="run-j",
        spec=spec,
        deploy=deploy_on(instance_type),
        warmup=WarmupResult(shapes=[warm], seconds=1),
    )
    return plan(request)


def test_auto_runs_short_cpu_benchmarks_in_the_lambda() -> None:
    result = plan_for("ml.c6i.xlarge")
    assert (result.runner, result.job_name) == ("lambda", JOB)


@pytest.mark.parametrize(
    ("instance_type", "warm_stop", "benchmark", "why"),
    [
        ("ml.g5.xlarge", "stable", {}, "GPU instance type ml.g5.xlarge"),
        ("ml.c6i.xlarge", "stable", {"max_duration_s": 300, "concurrency": [1, 4]}, "exceeds 720 s"),
        ("ml.c6i.xlarge", "out_of_time", {}, "warmup did not finish for b1/natural"),
        ("ml.c6i.xlarge", "stable", {"runner": "processing-job"}, "benchmark.runner is 'processing-job'"),
    ],
)
def test_auto_moves_gpu_long_or_unwarmed_runs_to_a_processing_job(
    instance_type: str, warm_stop: str, benchmark: dict[str, Any], why: str
) -> None:
    result = plan_for(instance_type, warm_stop, **benchmark)
    assert result.runner == "processing-job"
    assert why in result.reason


def test_the_plan_warns_once_when_the_cap_cannot_reach_the_n_p99_needs() -> None:
    # Given a shape warm at 500 ms per request at 1 client, capped at 20 s
    result = plan_for("ml.c6i.xlarge", last_ms=500.0, min_duration_s=3, min_requests=30, max_duration_s=20)
    # Then one warning names the measurement, the n it reaches and the cap that would do
    (finding,) = result.findings
    assert (finding.id, finding.severity) == ("sample-count", "warning")
    assert "b1 x natural c1 about n=40 of 299" in finding.message
    assert "reported unstable, with p99 unbounded" in finding.message
    assert "max_duration_s to at least 150 s" in finding.fix
    # And the plan line, printed before measuring, says the same once
    assert result.lines[1] == (
        "not bounded within the budget: b1 x natural c1 reaches about n=40 of 299 in max_duration_s 20 s "
        "(needs 2 min 30 s)"
    )


def test_the_plan_reads_throughput_from_the_warm_clients_not_a_latency_per_request() -> None:
    # Given a warm-up at 4 clients on one worker: 585 ms a request is 6.8 requests/s
    spec = fast_spec(
        "bundled",
        benchmark={"windows": "auto", "min_duration_s": 3, "max_duration_s": 60, "concurrency": [1, 4]},
    )
    warm = ShapeWarmup(
        batch_size=8,
        sequence_length=128,
        concurrency=4,
        requests=40,
        first_ms=900.0,
        last_ms=585.0,
        stable=True,
    )
    request = BenchmarkPlanRequest(
        run_id="run-j",
        spec=spec,
        deploy=deploy_on("ml.c6i.xlarge"),
        warmup=WarmupResult(shapes=[warm], seconds=1),
    )
    result = plan(request)
    # Then one client gets the one worker's 6.8 requests/s too: 299 requests in about 44 s, not 176 s
    assert result.findings == []
    assert result.lines == [
        "1 shape, 2 measurements, about 1 min 28 s (auto windows); b8 x 128 c1 needs 44 s for n=299",
        observability_line("realtime"),
    ]


def test_the_plan_says_detailed_observability_is_on_and_what_is_read_after_each_window() -> None:
    # Given a real-time endpoint's plan
    result = plan_for("ml.c6i.xlarge")
    # Then its last line states the endpoint config's observability and the server-side figures read
    assert "detailed observability on (MetricsConfig.EnableDetailedObservability" in result.lines[-1]
    assert "every 10 s" in result.lines[-1]
    assert "difference being network plus front end" in result.lines[-1]


def test_a_serverless_plan_says_it_has_no_metrics_config() -> None:
    assert "carries no MetricsConfig" in observability_line("serverless")


def test_a_fast_shape_gets_no_sample_count_warning() -> None:
    assert plan_for("ml.c6i.xlarge", last_ms=1.0, min_duration_s=3, max_duration_s=20).findings == []


def test_a_lambda_runner_that_cannot_finish_in_15_minutes_is_refused_before_anything_starts() -> None:
    with pytest.raises(SpecInvalid, match="runner 'lambda' cannot hold this benchmark"):
        fast_spec("bundled", benchmark={"runner": "lambda", "max_duration_s": 600})
