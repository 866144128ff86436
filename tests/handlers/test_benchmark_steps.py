"""The WarmUpShapes and RunBenchmark steps against an endpoint, with their results in moto's S3."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from tests.conftest import fast_spec
from tests.support.aws import Aws
from workflows import clock
from workflows.benchmark.figures import OUT_OF_TIME
from workflows.benchmark.noop_endpoint import NoopEndpoint, Script
from workflows.contracts import BenchmarkRequest, DeployResult, ErrorInfo, PipelineState, WarmupRequest
from workflows.errors import BenchmarkFailed, WarmupFailed
from workflows.reports.pipeline import report
from workflows.settings import Settings
from workflows.steps.run_benchmark import benchmark
from workflows.steps.warm_up_shapes import warmup

SETTINGS = Settings(bucket="bench-bucket", sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")
DEPLOY = DeployResult(
    endpoint_name="db-steps-a1",
    endpoint_config_name="db-steps-a1",
    model_names=["db-steps-a1-m0"],
    instance_type="ml.c6i.xlarge",
    created_at=clock.now(),
)


@pytest.fixture(autouse=True)
def function_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Lambda's role credentials arrive in its environment; the steps sign with them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ASIAFUNCTION")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "token")


def runtime_for(url: str) -> Any:
    return boto3.client("sagemaker-runtime", endpoint_url=url, region_name="us-east-1")


def test_warmup_warms_every_shape_and_records_the_cold_start() -> None:
    with NoopEndpoint(Script(delay_s=0.001)) as endpoint:
        result = warmup(
            WarmupRequest(run_id="steps", spec=fast_spec("bundled"), deploy=DEPLOY),
            runtime=runtime_for(endpoint.url),
        )
    assert [(w.batch_size, w.sequence_length) for w in result.shapes] == [
        (1, "natural"),
        (2, "natural"),
        (1, 16),
        (2, 16),
    ]
    assert result.cold_start is not None and result.cold_start.shape == "b1/natural"
    assert all(w.requests >= 1 and w.successes == w.requests for w in result.shapes)


def test_shapes_left_when_the_lambda_runs_out_of_time_are_recorded_not_warmed() -> None:
    with NoopEndpoint() as endpoint:
        result = warmup(
            WarmupRequest(run_id="steps", spec=fast_spec("bundled"), deploy=DEPLOY),
            runtime=runtime_for(endpoint.url),
            time_budget_s=0.0,
        )
        sent = endpoint.script.requests
    assert sent == 0
    assert {w.stop_reason for w in result.shapes} == {OUT_OF_TIME}
    assert result.cold_start is None


def test_a_shape_that_never_answers_fails_the_warmup_with_its_errors() -> None:
    script = Script(
        fail_first=10_000,
        fail_code="ModelError",
        fail_message="Invalid input name: token_type_ids",
        fail_status=424,
    )
    with NoopEndpoint(script) as endpoint, pytest.raises(WarmupFailed, match="ModelError.*token_type_ids"):
        warmup(
            WarmupRequest(run_id="steps", spec=fast_spec("bundled"), deploy=DEPLOY),
            runtime=runtime_for(endpoint.url),
        )


def test_the_lambda_runner_writes_every_figure_and_returns_the_compact_ones(aws: Aws) -> None:
    request = BenchmarkRequest(run_id="steps", spec=fast_spec("bundled"), deploy=DEPLOY)
    with NoopEndpoint(Script(delay_s=0.001)) as endpoint:
        result = benchmark(request, runtime=runtime_for(endpoint.url), s3=aws.s3, settings=SETTINGS)
    assert (result.runner, result.endpoint_url) == ("lambda", endpoint.url)
    assert result.detail_uri == "s3://bench-bucket/results/steps/benchmark.json"
    detail = json.loads(
        aws.s3.get_object(Bucket=SETTINGS.bucket, Key="results/steps/benchmark.json")["Body"].read()
    )
    assert len(detail["measurements"]) == len(result.shapes) == 4
    assert all(m["windows"] and m["latencies_ms"] for m in detail["measurements"])
    assert all(w.stop_reason for w in result.warm_checks)


def test_the_lambda_runner_fails_when_a_shape_gets_no_answer(aws: Aws) -> None:
    request = BenchmarkRequest(run_id="steps", spec=fast_spec("bundled"), deploy=DEPLOY)
    with (
        NoopEndpoint(
            Script(fail_first=10_000, fail_code="ThrottlingException", fail_message="Rate exceeded")
        ) as endpoint,
        pytest.raises(BenchmarkFailed, match="ThrottlingException"),
    ):
        benchmark(request, runtime=runtime_for(endpoint.url), s3=aws.s3, settings=SETTINGS)
    # And the failure report still shows what the requests met
    state = PipelineState(
        run_id="steps",
        spec=request.spec,
        deploy=DEPLOY,
        error=ErrorInfo(Error="BenchmarkFailed", Cause="every request failed"),
    )
    report(state, s3=aws.s3, settings=SETTINGS, status="FAILED", cloudwatch=None)
    result = json.loads(
        aws.s3.get_object(Bucket=SETTINGS.bucket, Key="results/steps/result.json")["Body"].read()
    )
    assert result["status"] == "FAILED" and result["client"]["runner"] == "lambda"
    assert result["measurements"][0]["errors_by_kind"] == {
        "ThrottlingException": result["measurements"][0]["requests"]
    }
    assert result["cloudwatch"]["available"] is False
    markdown = (
        aws.s3.get_object(Bucket=SETTINGS.bucket, Key="results/steps/report.md")["Body"].read().decode()
    )
    assert "ThrottlingException" in markdown
