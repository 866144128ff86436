"""Request tracing: ``hosting.tracing`` in the spec, TracingConfig in the endpoint config (validated against
botocore's CreateEndpointConfig), the refusals SageMaker would answer, and the plan's line."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import fast_spec
from tests.handlers.test_benchmark_job import deploy_on
from tests.handlers.test_hosting_endpoints import expect_endpoint, expect_model
from tests.support.hosting import ARTIFACT, CPU_IMAGE, SETTINGS, TAGS, client, request, stubbed, tags_match
from tests.support.shapes import operation_problems
from workflows.benchmark.results import ShapeWarmup, WarmupResult
from workflows.contracts import BenchmarkPlanRequest
from workflows.errors import SpecInvalid
from workflows.hosting.create_calls import create_endpoint, model_server_environment
from workflows.hosting.traces_group import keep_traces
from workflows.hosting.tracing import tracing_config, tracing_line
from workflows.naming import endpoint_traces_log_group
from workflows.steps.deploy_endpoint import deploy
from workflows.steps.plan_benchmark import plan

MODEL = "db-run-1-a1-m0"
TAG_MAP = {tag["Key"]: tag["Value"] for tag in TAGS}


class RunTags:
    """Equal to a tags map that holds the run's tags (its expiry comes from the clock: checked by key)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, dict) and tags_match([{"Key": k, "Value": v} for k, v in other.items()])

    __hash__ = None  # type: ignore[assignment]


VARIANT = {
    "VariantName": "primary",
    "ModelName": MODEL,
    "InstanceType": "ml.c6i.xlarge",
    "InitialInstanceCount": 1,
    "ContainerStartupHealthCheckTimeoutInSeconds": 600,
    "ModelDataDownloadTimeoutInSeconds": 600,
}


def test_a_traced_realtime_spec_sends_tracing_config_in_botocores_shape() -> None:
    # Given a real-time spec that traces 5% of requests, large payloads delivered to S3 under a key
    tracing = {
        "sampling_percent": 5,
        "large_payload_s3_uri": "s3://bench-bucket/traces/",
        "large_payload_kms_key_id": "alias/traces",
    }
    req = request({"instance_type_fallbacks": ["ml.c6i.xlarge"], "tracing": tracing})
    expected = {
        "EnableTracing": True,
        "InitialSamplingPercentage": 5,
        "LargePayloadDeliveryS3Uri": "s3://bench-bucket/traces/",
        "KmsKeyId": "alias/traces",
    }
    with stubbed("sagemaker") as (sagemaker, stub):
        env = model_server_environment(req.spec.hosting)
        expect_model(
            stub, PrimaryContainer={"Image": CPU_IMAGE, "ModelDataUrl": ARTIFACT, "Environment": env}
        )
        expect_endpoint(stub, VARIANT, TracingConfig=expected)
        with stubbed("logs") as (logs, logs_stub):
            # And the traces group is created with the run's tags, then kept the default 30 days
            group = "/aws/sagemaker/Endpoints/db-run-1-a1/traces"
            logs_stub.add_response("create_log_group", {}, {"logGroupName": group, "tags": RunTags()})
            logs_stub.add_response("put_retention_policy", {}, {"logGroupName": group, "retentionInDays": 30})
            # When the deploy step runs (the stubbed clients validate every request against botocore)
            result = deploy(req, sagemaker=sagemaker, settings=SETTINGS, logs=lambda region: logs)
    # Then the endpoint config carried the TracingConfig, and the endpoint was created
    assert result.endpoint_name == "db-run-1-a1"
    # And the request fits botocore's CreateEndpointConfig input, enums and patterns included
    request_body = {"EndpointConfigName": "c", "ProductionVariants": [VARIANT], "TracingConfig": expected}
    assert operation_problems(client("sagemaker"), "create_endpoint_config", request_body, output=False) == []


def test_tracing_is_off_by_default_and_the_config_carries_none() -> None:
    # Given a real-time spec that says nothing of tracing
    hosting = request({"instance_type_fallbacks": ["ml.c6i.xlarge"]}).spec.hosting
    # Then no TracingConfig is built, and the plan says nothing about it
    assert hosting.tracing is None
    assert tracing_config(hosting, variants=[VARIANT], extra={}) == {}
    assert tracing_line(hosting, endpoint_traces_log_group("db-run-1-a1")) is None


def test_a_sampling_percentage_outside_botocores_range_is_refused() -> None:
    with pytest.raises(SpecInvalid, match="sampling_percent"):
        request({"tracing": {"sampling_percent": 101}})


def test_a_serverless_spec_with_tracing_is_refused_naming_the_problem_and_the_fix() -> None:
    # When a serverless spec asks for tracing
    with pytest.raises(SpecInvalid) as refused:
        request({"mode": "serverless", "tracing": {"sampling_percent": 10}})
    # Then the refusal says why (SageMaker does not trace serverless variants) and what to do instead
    message = str(refused.value)
    assert "cannot be combined with a serverless endpoint" in message
    assert "Drop hosting.tracing, or deploy on instances (mode realtime)" in message


def test_a_payload_key_without_its_uri_is_refused() -> None:
    with pytest.raises(SpecInvalid, match="set large_payload_s3_uri, or drop the key"):
        request({"tracing": {"sampling_percent": 10, "large_payload_kms_key_id": "alias/traces"}})


@pytest.mark.parametrize(
    ("variant", "extra", "named"),
    [
        ({"VariantName": "primary", "ServerlessConfig": {"MemorySizeInMB": 2048}}, {}, "serverless"),
        (VARIANT, {"DataCaptureConfig": {"InitialSamplingPercentage": 10}}, "data capture"),
    ],
)
def test_the_endpoint_config_never_combines_tracing_with_what_sagemaker_refuses_beside_it(
    variant: dict[str, Any], extra: dict[str, Any], named: str
) -> None:
    # Given traced hosting settings, and a config with a serverless variant or data capture beside them
    hosting = request({"tracing": {"sampling_percent": 10}}).spec.hosting
    # When the config is built, then it is refused before any SageMaker call, naming the combination
    with stubbed("sagemaker") as (sagemaker, _), pytest.raises(SpecInvalid, match=named):
        create_endpoint(
            sagemaker, config="c", endpoint="e", variants=[variant], tags=[], hosting=hosting, **extra
        )


def test_the_plan_says_tracing_is_on_how_much_and_where_the_traces_go() -> None:
    hosting = request({"tracing": {"sampling_percent": 25}}).spec.hosting
    line = tracing_line(hosting, endpoint_traces_log_group("db-run-1-a1"))
    assert line is not None
    assert "request tracing on: 25% of requests" in line
    assert "/aws/sagemaker/Endpoints/db-run-1-a1/traces" in line
    assert "payloads over 512 KiB truncated" in line


def test_the_traces_group_sits_under_the_endpoints_own_group() -> None:
    assert endpoint_traces_log_group("db-run-1-a1") == "/aws/sagemaker/Endpoints/db-run-1-a1/traces"


def test_the_benchmark_plan_of_a_traced_run_names_its_endpoints_traces_group() -> None:
    # Given a traced run's benchmark plan request, warmed up on one shape
    spec = fast_spec("bundled", hosting={"tracing": {"sampling_percent": 10}}, benchmark={"windows": "auto"})
    warm = ShapeWarmup(
        batch_size=1, sequence_length="natural", requests=10, first_ms=1.0, last_ms=1.0, stable=True
    )
    planned = plan(
        BenchmarkPlanRequest(
            run_id="run-j", spec=spec, deploy=deploy_on(), warmup=WarmupResult(shapes=[warm], seconds=1)
        )
    )
    # Then its last line says tracing is on, and where this endpoint's traces go
    assert planned.lines[-1].startswith("request tracing on: 10% of requests")
    assert "/aws/sagemaker/Endpoints/db-run-j-a1/traces" in planned.lines[-1]


def test_a_traces_group_that_sagemaker_already_made_is_kept_and_gets_its_retention() -> None:
    # Given a traced spec kept 7 days, whose traces group SageMaker created first
    hosting = request(
        {
            "instance_type_fallbacks": ["ml.c6i.xlarge"],
            "tracing": {"sampling_percent": 1, "retention_days": 7},
        }
    ).spec.hosting
    group = "/aws/sagemaker/Endpoints/db-run-1-a1/traces"
    with stubbed("logs") as (logs, stub):
        stub.add_client_error(
            "create_log_group", "ResourceAlreadyExistsException", "The specified log group already exists"
        )
        stub.add_response("put_retention_policy", {}, {"logGroupName": group, "retentionInDays": 7})
        # When deploy keeps the traces
        kept = keep_traces(logs, hosting, endpoint="db-run-1-a1", tags=TAG_MAP)
    # Then the group is the endpoint's traces group, and its retention was set all the same
    assert kept == group


def test_tracing_off_touches_no_log_group() -> None:
    hosting = request({"instance_type_fallbacks": ["ml.c6i.xlarge"]}).spec.hosting
    with stubbed("logs") as (logs, _):
        assert keep_traces(logs, hosting, endpoint="db-run-1-a1", tags=TAG_MAP) is None


@pytest.mark.parametrize("days", [0, 10, 4000])
def test_a_retention_cloudwatch_does_not_offer_is_refused_with_the_choices(days: int) -> None:
    with pytest.raises(
        SpecInvalid,
        match=r"retention_days \d+ is not a retention CloudWatch Logs accepts: use one of 1, 3, 5, 7, 14, 30,",
    ):
        request(
            {
                "instance_type_fallbacks": ["ml.c6i.xlarge"],
                "tracing": {"sampling_percent": 1, "retention_days": days},
            }
        )
