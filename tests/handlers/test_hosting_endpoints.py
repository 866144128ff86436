"""Real-time, serverless and multi-container modes: the exact SageMaker calls, overrides, refusals."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import ANY

from tests.support.aws import Aws
from tests.support.hosting import ARTIFACT, CPU_IMAGE, GPU_IMAGE, ROLE, SETTINGS, request, stubbed, tags_match
from workflows.contracts import DeployOverrides
from workflows.errors import PreflightBlocked
from workflows.hosting.base import AwsClients
from workflows.hosting.create_calls import model_server_environment
from workflows.hosting.modes import strategy_for
from workflows.steps.deploy_endpoint import deploy

MODEL, CONFIG, ENDPOINT = "db-run-1-a1-m0", "db-run-1-a1", "db-run-1-a1"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:model/db-run-1-a1-m0"


def expect_model(stub: Any, **containers: Any) -> None:
    """CreateModel with the run's name, role and tags, and ``containers`` (PrimaryContainer or Containers)."""
    stub.add_response(
        "create_model",
        {"ModelArn": ARN},
        {"ModelName": MODEL, "ExecutionRoleArn": ROLE, "Tags": ANY, **containers},
    )


def expect_endpoint(stub: Any, variant: dict[str, Any], **config_extra: Any) -> None:
    # A real-time config publishes enhanced utilisation every 10 s; a serverless one has no instance.
    metrics = (
        {}
        if "ServerlessConfig" in variant
        else {
            "MetricsConfig": {
                "EnableEnhancedMetrics": True,
                "EnableDetailedObservability": True,
                "MetricPublishFrequencyInSeconds": 10,
            }
        }
    )
    stub.add_response(
        "create_endpoint_config",
        {"EndpointConfigArn": ARN},
        {
            "EndpointConfigName": CONFIG,
            "ProductionVariants": [variant],
            "Tags": ANY,
            **metrics,
            **config_extra,
        },
    )
    stub.add_response(
        "create_endpoint",
        {"EndpointArn": ARN},
        {"EndpointName": ENDPOINT, "EndpointConfigName": CONFIG, "Tags": ANY},
    )


def test_model_server_timeout_is_sent_in_seconds_and_in_mms_minutes() -> None:
    # Given a 120 s model server timeout (MMS 1.1.11 reads SAGEMAKER_MODEL_SERVER_TIMEOUT in minutes)
    hosting = request({"model_server_timeout_s": 120, "workers": 2}).spec.hosting
    # When the container environment is built
    env = model_server_environment(hosting)
    # Then the seconds variant carries 120 and the minutes variant 2 (not 120 minutes = 2 hours)
    assert env == {
        "SAGEMAKER_MODEL_SERVER_WORKERS": "2",
        "ORT_INTRA_OP_THREADS": "0",
        "SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS": "120",
        "SAGEMAKER_MODEL_SERVER_TIMEOUT": "2",
    }
    # And a timeout under a minute still gives MMS one minute, never zero
    assert (
        model_server_environment(hosting.model_copy(update={"model_server_timeout_s": 45}))[
            "SAGEMAKER_MODEL_SERVER_TIMEOUT"
        ]
        == "1"
    )


def test_realtime_creates_model_config_endpoint_with_overrides_applied() -> None:
    # Given a GPU real-time spec and a remediation's overrides (F02 single worker, F20 newer AMI)
    overrides = DeployOverrides(
        workers=1, ort_intra_op_threads=0, inference_ami_version="al2023-ami-sagemaker-inference-gpu-4-1"
    )
    req = request(
        {"instance_type_fallbacks": ["ml.g5.xlarge"], "workers": 4, "ort_intra_op_threads": 2},
        overrides=overrides,
    )
    env = model_server_environment(
        req.spec.hosting.model_copy(update={"workers": 1, "ort_intra_op_threads": 0})
    )
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_model(
            stub,
            PrimaryContainer={"Image": GPU_IMAGE, "ModelDataUrl": ARTIFACT, "Environment": env},
        )
        expect_endpoint(
            stub,
            {
                "VariantName": "primary",
                "ModelName": MODEL,
                "InstanceType": "ml.g5.xlarge",
                "InitialInstanceCount": 1,
                "ContainerStartupHealthCheckTimeoutInSeconds": 600,
                "ModelDataDownloadTimeoutInSeconds": 600,
                "InferenceAmiVersion": "al2023-ami-sagemaker-inference-gpu-4-1",
            },
        )
        # When the deploy step runs
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    # Then the result names what was created, in the mode that created it, with the settings used
    assert (result.mode, result.endpoint_name, result.model_names) == ("realtime", ENDPOINT, [MODEL])
    assert result.effective_hosting["workers"] == 1
    assert result.target == {}


def test_serverless_sends_memory_and_concurrency_and_steps_memory_by_override() -> None:
    # Given a serverless spec at 2048 MB and a remediation that stepped memory up (F14)
    req = request(
        {"mode": "serverless", "memory_size_mb": 2048, "max_concurrency": 3},
        overrides=DeployOverrides(serverless_memory_mb=4096),
    )
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_model(
            stub,
            PrimaryContainer={
                "Image": CPU_IMAGE,
                "ModelDataUrl": ARTIFACT,
                "Environment": model_server_environment(req.spec.hosting),
            },
        )
        expect_endpoint(
            stub,
            {
                "VariantName": "primary",
                "ModelName": MODEL,
                "ServerlessConfig": {"MemorySizeInMB": 4096, "MaxConcurrency": 3},
            },
        )
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    # Then the endpoint has no instance type and records the memory it got
    assert result.instance_type == "serverless"
    assert result.effective_hosting["memory_size_mb"] == 4096


def test_serverless_and_realtime_calls_are_accepted_by_moto(aws: Aws) -> None:
    sagemaker = aws.sagemaker
    # Given a serverless spec, deployed against moto's SageMaker validation
    result = deploy(
        request({"mode": "serverless", "memory_size_mb": 6144}), sagemaker=sagemaker, settings=SETTINGS
    )
    # Then moto stored the serverless variant and the run's tags
    config = sagemaker.describe_endpoint_config(EndpointConfigName=result.endpoint_config_name)
    assert config["ProductionVariants"][0]["ServerlessConfig"] == {
        "MemorySizeInMB": 6144,
        "MaxConcurrency": 5,
    }
    arn = sagemaker.describe_endpoint(EndpointName=result.endpoint_name)["EndpointArn"]
    assert tags_match(sagemaker.list_tags(ResourceArn=arn)["Tags"])


def test_multi_container_direct_co_hosts_every_model_with_its_hostname() -> None:
    # Given the run's model and a co-hosted one from its own artifact
    other = "s3://bench-bucket/artifacts/other/model.tar.gz"
    req = request(
        {
            "mode": "multi-container",
            "instance_type_fallbacks": ["ml.c6i.2xlarge"],
            "models": [{"name": "nli", "model_data_uri": other}],
        }
    )
    env = model_server_environment(req.spec.hosting)
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_model(
            stub,
            Containers=[
                {
                    "ContainerHostname": "main",
                    "Image": CPU_IMAGE,
                    "ModelDataUrl": ARTIFACT,
                    "Environment": env,
                },
                {
                    "ContainerHostname": "nli",
                    "Image": CPU_IMAGE,
                    "ModelDataUrl": other,
                    "Environment": env,
                },
            ],
            InferenceExecutionConfig={"Mode": "Direct"},
        )
        expect_endpoint(
            stub,
            {
                "VariantName": "primary",
                "ModelName": MODEL,
                "InstanceType": "ml.c6i.2xlarge",
                "InitialInstanceCount": 1,
                "ContainerStartupHealthCheckTimeoutInSeconds": 600,
                "ModelDataDownloadTimeoutInSeconds": 600,
            },
        )
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    # Then the benchmark reaches the run's own container, and every container is addressable
    assert result.target == {"TargetContainerHostname": "main"}
    assert result.targets["nli"] == {"TargetContainerHostname": "nli"}


@pytest.mark.parametrize(
    ("hosting", "finding", "text"),
    [
        (
            {"instance_type_fallbacks": ["ml.g5.xlarge"]},
            "F04",
            "not supported for a Model using Direct InferenceExecutionMode",
        ),
        (
            {
                "image": "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.26.0-gpu-py312-cu129-ubuntu22.04-sagemaker"
            },
            "F05",
            "accept-bind-to-port=true",
        ),
    ],
)
def test_multi_container_refuses_gpu_and_unlabelled_images_before_any_call(
    hosting: dict[str, Any], finding: str, text: str
) -> None:
    # Given a Direct endpoint on a GPU type, or with an image lacking accept-bind-to-port
    req = request({"mode": "multi-container", "models": [{"name": "b"}], **hosting})
    # When it deploys with a client that accepts no call at all
    with stubbed("sagemaker") as (sagemaker, _), pytest.raises(PreflightBlocked) as raised:
        deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    # Then it is refused with the field's message, and nothing was created
    assert finding in str(raised.value) and text in str(raised.value)


def test_every_mode_has_a_strategy_and_a_client_policy() -> None:
    from workflows.benchmark.policy import POLICIES
    from workflows.hosting.modes import strategies

    # Given every member of the spec's hosting union
    from workflows.hosting.specs import Hosting

    members = {m.model_fields["mode"].default for m in Hosting.__origin__.__args__}  # type: ignore[attr-defined]
    # Then each has its strategy, and the benchmark knows how to talk to it
    assert set(strategies()) == members
    assert members <= set(POLICIES)
    assert all(strategy_for(mode).mode == mode for mode in members)


def test_a_deploy_past_the_listed_instance_types_says_so() -> None:
    from workflows.errors import SpecInvalid

    req = request({"instance_type_fallbacks": ["ml.c6i.xlarge"]}, index=1)
    with pytest.raises(SpecInvalid, match="instance type #2"):
        strategy_for("realtime").deploy(req, clients=AwsClients(sagemaker=None), settings=SETTINGS)
