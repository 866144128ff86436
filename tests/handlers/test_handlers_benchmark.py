"""The benchmark handlers, called as Lambda calls them, on moto and a local endpoint stand-in."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lambdas import (
    collect_benchmark_results,
    describe_benchmark_job,
    plan_benchmark,
    run_benchmark,
    start_benchmark_job,
    stop_benchmark_job,
    warm_up_shapes,
)
from tests.conftest import fast_spec
from tests.support.aws import Aws
from tests.support.handlers import deployed_on, invoke
from workflows.benchmark.noop_endpoint import NoopEndpoint, Script
from workflows.benchmark.results import WarmupResult
from workflows.contracts import (
    BenchmarkJobRequest,
    BenchmarkJobStatus,
    BenchmarkPlan,
    BenchmarkPlanRequest,
    BenchmarkRequest,
    WarmupRequest,
)

SHAPES = [(1, "natural"), (2, "natural"), (1, 16), (2, 16)]
# One shape measured: the handler's wiring is under test here, the engine's figures elsewhere.
ONE_SHAPE = {"batch_sizes": [1], "sequence_lengths": ["natural"]}


@pytest.fixture
def endpoint(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An endpoint that answers every shape, where the handlers' SageMaker runtime client sends its calls."""
    with NoopEndpoint(Script(delay_s=0.001)) as running:
        monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", running.url)
        yield running


def job_request(run_id: str) -> BenchmarkJobRequest:
    spec = fast_spec("bundled", benchmark={"runner": "processing-job", **ONE_SHAPE})
    plan = BenchmarkPlan(
        runner="processing-job",
        reason="benchmark.runner is 'processing-job'",
        planned_s=spec.benchmark.planned_seconds(),
        job_name=f"db-{run_id}-a1-b1",
        job_instance_type=spec.benchmark.job_instance_type,
    )
    return BenchmarkJobRequest(run_id=run_id, spec=spec, deploy=deployed_on(run_id), plan=plan)


def test_warm_up_shapes_warms_every_shape_within_the_lambda_time(endpoint: NoopEndpoint) -> None:
    # Given a deployed endpoint that answers
    event = WarmupRequest(run_id="h-warm", spec=fast_spec("bundled"), deploy=deployed_on("h-warm"))
    # When WarmUpShapes runs with its function's 15 minutes
    result = WarmupResult.model_validate(invoke(warm_up_shapes, event))
    # Then every shape was warmed with requests that all succeeded, and the first one was the cold start
    assert [(w.batch_size, w.sequence_length) for w in result.shapes] == SHAPES
    assert all(w.requests >= 1 and w.successes == w.requests for w in result.shapes)
    assert endpoint.script.requests >= len(SHAPES)
    assert result.cold_start is not None and result.cold_start.shape == "b1/natural"


def test_plan_benchmark_keeps_a_short_cpu_run_in_the_lambda(aws: Aws, endpoint: NoopEndpoint) -> None:
    # Given a warmed CPU endpoint and a short measurement
    warm = WarmupRequest(run_id="h-plan", spec=fast_spec("bundled"), deploy=deployed_on("h-plan"))
    warmup = WarmupResult.model_validate(invoke(warm_up_shapes, warm))
    event = BenchmarkPlanRequest(run_id="h-plan", spec=warm.spec, deploy=warm.deploy, warmup=warmup)
    # When PlanBenchmark chooses the runner
    result = invoke(plan_benchmark, event)
    # Then the Lambda runs it, and says why
    assert result["runner"] == "lambda"
    assert "CPU instance type ml.c6i.xlarge" in result["reason"]


def test_plan_benchmark_sends_a_gpu_endpoint_to_a_processing_job(aws: Aws) -> None:
    warmup = WarmupResult(shapes=[], seconds=0.0)
    deploy = deployed_on("h-gpu", instance_type="ml.g5.xlarge")
    event = BenchmarkPlanRequest(run_id="h-gpu", spec=fast_spec("bundled"), deploy=deploy, warmup=warmup)
    result = invoke(plan_benchmark, event)
    assert (result["runner"], result["reason"]) == ("processing-job", "GPU instance type ml.g5.xlarge")
    assert result["job_name"].startswith("db-h-gpu-")


def test_run_benchmark_measures_every_shape_and_writes_the_detail_to_s3(
    aws: Aws, endpoint: NoopEndpoint
) -> None:
    # Given a deployed endpoint that answers
    spec = fast_spec("bundled", benchmark=ONE_SHAPE)
    event = BenchmarkRequest(run_id="h-bench", spec=spec, deploy=deployed_on("h-bench"))
    # When RunBenchmark measures it
    result = invoke(run_benchmark, event)
    # Then every shape has figures without errors, and every window is in the run's results folder
    assert [(s["batch_size"], s["sequence_length"]) for s in result["shapes"]] == [(1, "natural")]
    assert all(s["errors"] == 0 and s["p50_ms"] > 0 for s in result["shapes"])
    assert result["detail_uri"] == f"s3://{aws.bucket}/results/h-bench/benchmark.json"
    detail = json.loads(
        aws.s3.get_object(Bucket=aws.bucket, Key="results/h-bench/benchmark.json")["Body"].read()
    )
    assert len(detail["measurements"]) == 1 and detail["measurements"][0]["latencies_ms"]


def test_collect_benchmark_results_reads_the_job_output(aws: Aws, endpoint: NoopEndpoint) -> None:
    # Given the job started, and its output written where the job writes it (the engine's own output)
    request = job_request("h-collect")
    started = BenchmarkJobStatus.model_validate(invoke(start_benchmark_job, request))
    measured = invoke(
        run_benchmark, BenchmarkRequest(run_id="h-collect", spec=request.spec, deploy=request.deploy)
    )
    source = measured["detail_uri"].removeprefix(f"s3://{aws.bucket}/")
    target = started.output_uri.removeprefix(f"s3://{aws.bucket}/") + "benchmark.json"
    aws.s3.copy_object(Bucket=aws.bucket, Key=target, CopySource={"Bucket": aws.bucket, "Key": source})
    # When CollectBenchmarkResults reads the finished job
    finished = request.model_copy(update={"job": started.model_copy(update={"status": "Completed"})})
    result = invoke(collect_benchmark_results, finished)
    # Then the execution state gets the job's figures, with the detail file it read them from
    assert result["runner"] == "processing-job"
    assert [(s["batch_size"], s["sequence_length"]) for s in result["shapes"]] == [(1, "natural")]
    assert result["detail_uri"] == f"{started.output_uri}benchmark.json"


def test_describe_benchmark_job_polls_the_started_job(aws: Aws) -> None:
    # Given the run's benchmark job started
    request = job_request("h-describe")
    started = BenchmarkJobStatus.model_validate(invoke(start_benchmark_job, request))
    # When DescribeBenchmarkJob polls it
    result = invoke(describe_benchmark_job, request.model_copy(update={"job": started}))
    # Then it reports SageMaker's status for that job, as one more poll
    described = aws.sagemaker.describe_processing_job(ProcessingJobName=request.plan.job_name)
    assert (result["job_name"], result["status"]) == (request.plan.job_name, described["ProcessingJobStatus"])
    assert result["polls"] == started.polls + 1


def test_stop_benchmark_job_reports_the_job_it_found(aws: Aws) -> None:
    # Given the run's benchmark job created in SageMaker
    request = job_request("h-stop")
    invoke(start_benchmark_job, request)
    described = aws.sagemaker.describe_processing_job(ProcessingJobName=request.plan.job_name)
    # When the failure path's StopBenchmarkJob runs
    result = invoke(stop_benchmark_job, request)
    # Then it names the job and stops it only if it was still running
    running = described["ProcessingJobStatus"] == "InProgress"
    assert result["job_name"] == request.plan.job_name
    assert result["status"] == ("Stopping" if running else described["ProcessingJobStatus"])


def test_stop_benchmark_job_is_fine_with_a_job_never_created(aws: Aws) -> None:
    result = invoke(stop_benchmark_job, job_request("h-never"))
    assert result["status"] == "NotCreated"
