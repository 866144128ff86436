"""The benchmark job after a run moved across Regions: it calls the endpoint in the endpoint's Region, measures
the routed shape through the run's router, and its samples become the same figures the Lambda runner makes."""

from __future__ import annotations

import json
from pathlib import Path

import botocore.loaders
import pytest

from tests.handlers.test_benchmark_job import SETTINGS, job_request
from tests.support.aws import Aws
from workflows.aws.clients import ROUTER_RUNTIME_SERVICE
from workflows.aws.storage import download_folder
from workflows.benchmark import job as benchmark_job
from workflows.benchmark.routed import figures_of
from workflows.benchmark.routed_calls import ROUNDS_FLOOR
from workflows.contracts import BenchmarkJobRequest
from workflows.errors import BenchmarkJobFailed
from workflows.hosting.router_state import RouterDestination, RouterResult
from workflows.steps.collect_benchmark_results import collect
from workflows.steps.start_benchmark_job import job_config, start

EAST = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-j-a1"
WEST = "arn:aws:sagemaker:us-west-2:123456789012:endpoint/db-run-j-a2"
ROUTER = RouterResult(
    name="db-run-j-router",
    arn="arn:aws:sagemaker:us-east-1:123456789012:inference-router/db-run-j-router",
    region="us-east-1",
    routing_target="main",
    destinations=[
        RouterDestination(region="us-east-1", endpoint_name="db-run-j-a1", arn=EAST, status="Creating"),
        RouterDestination(region="us-west-2", endpoint_name="db-run-j-a2", arn=WEST, status="InService"),
    ],
)


def moved(router: RouterResult | None = ROUTER) -> BenchmarkJobRequest:
    """The job request of a run whose endpoint moved to us-west-2, routed from us-east-1."""
    request = job_request()
    deploy = request.deploy.model_copy(update={"endpoint_name": "db-run-j-a2", "region": "us-west-2"})
    return request.model_copy(update={"deploy": deploy, "router": router})


def test_the_jobs_config_names_the_endpoints_region_and_the_routed_shapes_plan() -> None:
    # When the config of a moved, routed run's job is made
    config = job_config(moved(), SETTINGS)
    # Then the job calls the endpoint in its own Region, and measures the spec's first shape through the router
    assert (config["region"], config["endpoint_name"]) == ("us-west-2", "db-run-j-a2")
    assert config["routed"] == {
        "router": "db-run-j-router",
        "routing_target": "main",
        "region": "us-east-1",
        "batch_size": 1,
        "sequence_length": "natural",
        "seed": moved().spec.benchmark.seed,
        "rounds": ROUNDS_FLOOR,
    }
    # And a run in one Region calls its endpoint in the run's Region and measures no routed shape
    alone = job_config(job_request(), SETTINGS)
    assert alone["region"] == SETTINGS.region and "routed" not in alone


def test_the_job_carries_the_router_runtimes_model_for_an_image_whose_botocore_predates_it(
    aws: Aws, tmp_path: Path
) -> None:
    # Given the job started
    request = moved()
    start(request, sagemaker=aws.sagemaker, s3=aws.s3, settings=SETTINGS)
    download_folder(aws.s3, benchmark_job.job_prefix(SETTINGS, "run-j"), tmp_path)
    # Then its code input holds the router runtime's model where AWS_DATA_PATH points botocore
    environment = benchmark_job.processing_job_request(request, settings=SETTINGS)["Environment"]
    assert environment["AWS_DATA_PATH"] == f"{benchmark_job.CODE_DIR}/{benchmark_job.MODELS}"
    shipped = tmp_path / "code" / benchmark_job.MODELS
    # And a botocore that knows nothing but that folder finds the operation, its headers and its endpoints
    loader = botocore.loaders.Loader(extra_search_paths=[str(shipped)], include_default_search_paths=False)
    model = loader.load_service_model(ROUTER_RUNTIME_SERVICE, "service-2")
    output = model["shapes"]["InvokeInferenceRouterOutput"]["members"]
    assert output["RoutingReason"]["locationName"] == "X-Amzn-SageMaker-Invoked-Routing-Reason"
    assert loader.load_service_model(ROUTER_RUNTIME_SERVICE, "endpoint-rule-set-1")["rules"]


def _with_output(
    aws: Aws, request: BenchmarkJobRequest, routed: dict[str, object] | None
) -> BenchmarkJobRequest:
    measurement = {
        "batch_size": 1, "sequence_length": "natural", "concurrency": 1, "requests": 3, "errors": 0,
        "errors_by_kind": {}, "duration_s": 1.0, "p50_ms": 10.0, "p90_ms": 11.0, "p99_ms": 12.0, "max_ms": 12.0,
        "mean_ms": 10.5, "std_ms": 0.5, "samples_per_s": 100.0, "requests_per_s": 100.0, "stable": True,
    }  # fmt: skip
    output = {"environment": {"endpoint_url": "x"}, "measurements": [measurement], "warm_checks": []}
    if routed is not None:
        output["routed"] = routed
    key = "results/run-j/benchmark-job/benchmark.json"
    aws.s3.put_object(Bucket=SETTINGS.bucket, Key=key, Body=json.dumps(output))
    return request.model_copy(update={"job": benchmark_job.job_status(request, SETTINGS, "Completed")})


def test_the_jobs_routed_samples_are_collected_as_the_lambda_runners_figures(aws: Aws) -> None:
    # Given the job's routed samples: 40 calls each way, the router 2 ms slower, all served in the west
    direct = [10 + i / 10 for i in range(40)]
    samples = {
        "shape": "b1/natural",
        "direct_ms": direct,
        "calls": [{"latency_ms": ms + 2, "destination": WEST, "reason": "only-healthy"} for ms in direct],
    }
    # When they are collected
    result = collect(_with_output(aws, moved(), samples), s3=aws.s3)
    # Then the figures are the ones the Lambda runner makes of the same samples, with the router's names
    expected = figures_of(
        samples, router=ROUTER.arn, destinations=[EAST, WEST], direct_endpoint="db-run-j-a2"
    )
    assert result.routed == expected
    assert result.routed is not None and result.routed.routed.n == 40 and result.routed.added_p50_ms == 2.0
    assert [(s.region, s.share, s.reasons) for s in result.routed.shares] == [
        ("us-west-2", 1.0, {"only-healthy": 40})
    ]


def test_a_routed_runs_job_output_without_the_routed_shape_fails_the_step(aws: Aws) -> None:
    with pytest.raises(BenchmarkJobFailed, match="db-run-j-router"):
        collect(_with_output(aws, moved(), None), s3=aws.s3)
    # And a run in one Region is collected without one
    assert collect(_with_output(aws, moved(router=None), None), s3=aws.s3).routed is None
