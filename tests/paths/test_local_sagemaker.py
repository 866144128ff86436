"""The local SageMaker's control plane and routing, through unchanged boto3 clients (light server)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.support.local_sagemaker import (
    ONE_TEXT,
    ROLE,
    components_endpoint,
    container,
    deploy,
    endpoint_settled,
    log_text,
    runtime,
    upload_artifact,
    wait_for,
)
from workflows.local.engine import LocalEngine


@pytest.fixture
def model_uri(engine: LocalEngine, tiny_artifact: Path, tmp_path: Path) -> str:
    return upload_artifact(engine, tiny_artifact, "models/tiny/model.tar.gz", tmp_path)


def error_of(call: Any, **kwargs: Any) -> dict[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    return dict(caught.value.response["Error"])


def test_endpoint_turns_in_service_once_a_real_invocation_is_answered(
    engine: LocalEngine, model_uri: str
) -> None:
    sagemaker = engine.client("sagemaker")
    # Given a model on a real-time endpoint
    deploy(sagemaker, "ep-states", {"PrimaryContainer": container(model_uri)})
    # When it is still Creating, deleting it is refused as on AWS
    error = error_of(sagemaker.delete_endpoint, EndpointName="ep-states")
    assert error["Code"] == "ValidationException"
    assert error["Message"].startswith('Cannot delete in-progress endpoint "arn:aws:sagemaker:us-east-1:')
    # Then it goes Creating -> InService, its variants appear once the instance is assigned,
    # and LastModifiedTime moves
    seen = endpoint_settled(sagemaker, "ep-states")
    final = seen[-1]
    assert final["EndpointStatus"] == "InService", final.get("FailureReason")
    assert {d["EndpointStatus"] for d in seen[:-1]} <= {"Creating"}
    assert final["ProductionVariants"][0]["CurrentInstanceCount"] == 1
    assert final["LastModifiedTime"] > final["CreationTime"]
    creating_with_variants = [
        d for d in seen if d["EndpointStatus"] == "Creating" and d.get("ProductionVariants")
    ]
    assert all(d["ProductionVariants"][0]["CurrentInstanceCount"] == 0 for d in creating_with_variants)
    # And every Creating answer carries the pending deployment (0 of 1 instances), the InService one none
    creating = [d for d in seen if d["EndpointStatus"] == "Creating"]
    assert creating and all(
        d["PendingDeploymentSummary"]["ProductionVariants"][0]["DesiredInstanceCount"] == 1 for d in creating
    )
    assert all(d["PendingDeploymentSummary"]["StartTime"] == d["CreationTime"] for d in creating)
    assert "PendingDeploymentSummary" not in final
    # And the model answers through the runtime API
    answer = runtime(engine).invoke_endpoint(
        EndpointName="ep-states", Body=ONE_TEXT, ContentType="application/json"
    )
    assert len(json.loads(answer["Body"].read())["embeddings"]) == 1
    assert answer["InvokedProductionVariant"] == "primary"
    # And the container's output is in CloudWatch Logs, saying which server runs
    text = wait_for(
        lambda: {"text": log_text(engine, "/aws/sagemaker/Endpoints/ep-states")},
        lambda d: "Listening on" in d["text"],
        timeout_s=30,
    )[-1]["text"]
    assert "serves with the light server" in text
    assert (engine.workdir / "endpoint-logs" / "ep-states.log").read_text().count("Listening on") == 1
    # And once deleted, it is gone with its server
    sagemaker.delete_endpoint(EndpointName="ep-states")
    assert error_of(sagemaker.describe_endpoint, EndpointName="ep-states")["Message"] == (
        'Could not find endpoint "arn:aws:sagemaker:us-east-1:123456789012:endpoint/ep-states".'
    )
    assert engine.sagemaker is not None and engine.sagemaker.running_containers() == []


@pytest.mark.parametrize(
    ("serverless", "message"),
    [
        (
            {"MemorySizeInMB": 8192, "MaxConcurrency": 1},
            "1 validation error detected: Value '8192' at 'productionVariants.1.member.serverlessConfig.memorySizeInMB' "
            "failed to satisfy constraint: Member must have value less than or equal to 6144",
        ),
        (
            {"MemorySizeInMB": 1500, "MaxConcurrency": 1},
            "Valid values are in 1 GB increments: 1024 MB, 2048 MB",
        ),
        (
            {"MemorySizeInMB": 2048, "MaxConcurrency": 201},
            "Value '201' at 'productionVariants.1.member.serverlessConfig.maxConcurrency' failed to satisfy "
            "constraint: Member must have value less than or equal to 200",
        ),
        (
            {"MemorySizeInMB": 2048, "MaxConcurrency": 2, "ProvisionedConcurrency": 3},
            "ProvisionedConcurrency (3) must be less than or equal to MaxConcurrency (2).",
        ),
    ],
)
def test_serverless_memory_sizes_outside_1024_to_6144_in_1_gb_steps_are_refused(
    engine: LocalEngine, model_uri: str, serverless: dict[str, int], message: str
) -> None:
    sagemaker = engine.client("sagemaker")
    sagemaker.create_model(ModelName="m", ExecutionRoleArn=ROLE, PrimaryContainer=container(model_uri))
    # When a serverless config asks for an unsupported size or concurrency (botocore itself refuses
    # values under the minimum before sending: it checks minimums, not maximums)
    error = error_of(
        sagemaker.create_endpoint_config,
        EndpointConfigName="c",
        ProductionVariants=[{"VariantName": "primary", "ModelName": "m", "ServerlessConfig": serverless}],
    )
    # Then it is refused with SageMaker's code and text, and nothing was created
    assert error["Code"] == "ValidationException"
    assert message in error["Message"]
    assert sagemaker.list_endpoint_configs()["EndpointConfigs"] == []


def test_provisioned_concurrency_starts_the_serverless_container_before_in_service(
    engine: LocalEngine, model_uri: str
) -> None:
    sagemaker = engine.client("sagemaker")
    # Given a serverless endpoint that provisions one concurrent request
    deploy(
        sagemaker,
        "ep-provisioned",
        {"PrimaryContainer": container(model_uri)},
        ServerlessConfig={"MemorySizeInMB": 2048, "MaxConcurrency": 2, "ProvisionedConcurrency": 1},
    )
    # When it turns InService
    final = endpoint_settled(sagemaker, "ep-provisioned")[-1]
    assert final["EndpointStatus"] == "InService", final.get("FailureReason")
    assert final["ProductionVariants"][0]["CurrentServerlessConfig"]["ProvisionedConcurrency"] == 1
    # Then its container is already serving, before any request (an on-demand one starts on the first)
    assert engine.sagemaker is not None
    assert len(engine.sagemaker.running_containers()) == 1
    answer = runtime(engine).invoke_endpoint(
        EndpointName="ep-provisioned", Body=ONE_TEXT, ContentType="application/json"
    )
    assert len(json.loads(answer["Body"].read())["embeddings"]) == 1
    sagemaker.delete_endpoint(EndpointName="ep-provisioned")
    assert engine.sagemaker.running_containers() == []


def test_control_plane_refuses_bad_names_duplicates_and_unknown_resources(
    engine: LocalEngine, model_uri: str
) -> None:
    sagemaker = engine.client("sagemaker")
    sagemaker.create_model(ModelName="m", ExecutionRoleArn=ROLE, PrimaryContainer=container(model_uri))
    # When a name breaks the pattern, a model exists already, or a config names no known model
    bad_name = error_of(sagemaker.create_model, ModelName="bad_name", PrimaryContainer=container(model_uri))
    duplicate = error_of(sagemaker.create_model, ModelName="m", PrimaryContainer=container(model_uri))
    unknown = error_of(
        sagemaker.create_endpoint_config,
        EndpointConfigName="c",
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": "nope",
                "InstanceType": "ml.c6i.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
    )
    # Then each answer is SageMaker's
    assert bad_name["Message"].startswith("1 validation error detected: Value 'bad_name' at 'modelName'")
    assert (
        duplicate["Message"]
        == 'Cannot create already existing model "arn:aws:sagemaker:us-east-1:123456789012:model/m".'
    )
    assert unknown["Message"] == 'Could not find model "arn:aws:sagemaker:us-east-1:123456789012:model/nope".'
    assert {bad_name["Code"], duplicate["Code"], unknown["Code"]} == {"ValidationException"}


def test_tags_are_added_listed_and_deleted_by_arn(engine: LocalEngine, model_uri: str) -> None:
    sagemaker = engine.client("sagemaker")
    arn = sagemaker.create_model(
        ModelName="m",
        ExecutionRoleArn=ROLE,
        PrimaryContainer=container(model_uri),
        Tags=[{"Key": "run", "Value": "1"}],
    )["ModelArn"]
    # When tags are added (one replacing a value) and one deleted
    sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "run", "Value": "2"}, {"Key": "team", "Value": "x"}])
    sagemaker.delete_tags(ResourceArn=arn, TagKeys=["team"])
    # Then the list shows the result
    assert sagemaker.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "run", "Value": "2"}]


def test_serverless_endpoint_is_in_service_without_a_container_and_cold_starts_on_the_first_call(
    engine: LocalEngine, model_uri: str
) -> None:
    sagemaker = engine.client("sagemaker")
    # Given a serverless endpoint
    deploy(
        sagemaker,
        "ep-serverless",
        {"PrimaryContainer": container(model_uri)},
        ServerlessConfig={"MemorySizeInMB": 2048, "MaxConcurrency": 2},
    )
    final = endpoint_settled(sagemaker, "ep-serverless")[-1]
    # Then it is InService with its serverless config and no container yet
    assert final["EndpointStatus"] == "InService"
    assert final["ProductionVariants"][0]["CurrentServerlessConfig"] == {
        "MemorySizeInMB": 2048,
        "MaxConcurrency": 2,
    }
    assert "CurrentInstanceCount" not in final["ProductionVariants"][0]
    assert engine.sagemaker is not None and engine.sagemaker.running_containers() == []
    # When it is first invoked, the container starts and answers
    answer = runtime(engine).invoke_endpoint(
        EndpointName="ep-serverless", Body=ONE_TEXT, ContentType="application/json"
    )
    assert "embeddings" in json.loads(answer["Body"].read())
    assert engine.sagemaker.running_containers() == ["ep-serverless"]
    # And the endpoint log says whether MemorySizeInMB is a real cap here
    log = (engine.workdir / "endpoint-logs" / "ep-serverless.log").read_text()
    assert "memory capped at 2048 MB" in log or "MemorySizeInMB 2048 is NOT enforced" in log
    sagemaker.delete_endpoint(EndpointName="ep-serverless")


def test_direct_multi_container_endpoint_runs_a_server_per_container_invoked_by_hostname(
    engine: LocalEngine, model_uri: str
) -> None:
    sagemaker = engine.client("sagemaker")
    # Given two containers in Direct mode
    deploy(
        sagemaker,
        "ep-direct",
        {
            "Containers": [
                {**container(model_uri), "ContainerHostname": "first"},
                {**container(model_uri), "ContainerHostname": "second"},
            ],
            "InferenceExecutionConfig": {"Mode": "Direct"},
        },
    )
    assert endpoint_settled(sagemaker, "ep-direct")[-1]["EndpointStatus"] == "InService"
    client = runtime(engine)
    # When each is invoked by its hostname, each answers
    for hostname in ("first", "second"):
        answer = client.invoke_endpoint(
            EndpointName="ep-direct",
            Body=ONE_TEXT,
            ContentType="application/json",
            TargetContainerHostname=hostname,
        )
        assert "embeddings" in json.loads(answer["Body"].read())
    # Then they are two servers on two ports (SAGEMAKER_BIND_TO_PORT)
    assert engine.sagemaker is not None
    [endpoint] = [e for e in engine.sagemaker.endpoints.values() if e.name == "ep-direct"]
    ports = {c.port for c in engine.sagemaker.endpoint_containers(endpoint)}
    assert len(ports) == 2
    # And a call without a hostname, or with an unknown one, is a validation error
    missing = error_of(
        client.invoke_endpoint, EndpointName="ep-direct", Body=ONE_TEXT, ContentType="application/json"
    )
    unknown = error_of(
        client.invoke_endpoint,
        EndpointName="ep-direct",
        Body=ONE_TEXT,
        ContentType="application/json",
        TargetContainerHostname="third",
    )
    assert missing["Code"] == unknown["Code"] == "ValidationError"
    assert "TargetContainerHostname" in missing["Message"] and "third" in unknown["Message"]
    sagemaker.delete_endpoint(EndpointName="ep-direct")


def test_inference_component_copies_serve_and_zero_copies_have_no_capacity(
    engine: LocalEngine, model_uri: str
) -> None:
    sagemaker = engine.client("sagemaker")
    # Given an endpoint for inference components (no model in its config) and one component
    components_endpoint(sagemaker, "ep-ic", model_uri)
    sagemaker.create_inference_component(
        InferenceComponentName="ic-one",
        EndpointName="ep-ic",
        VariantName="primary",
        Specification={
            "ModelName": "m",
            "ComputeResourceRequirements": {"NumberOfCpuCoresRequired": 1, "MinMemoryRequiredInMb": 1024},
        },
        RuntimeConfig={"CopyCount": 1},
    )

    def component() -> dict[str, Any]:
        return dict(sagemaker.describe_inference_component(InferenceComponentName="ic-one"))

    described = wait_for(component, lambda d: d["InferenceComponentStatus"] != "Creating")[-1]
    assert described["InferenceComponentStatus"] == "InService", described.get("FailureReason")
    assert described["RuntimeConfig"] == {"DesiredCopyCount": 1, "CurrentCopyCount": 1}
    client = runtime(engine)
    # When it is invoked by name it answers; without the name the endpoint refuses
    answer = client.invoke_endpoint(
        EndpointName="ep-ic", Body=ONE_TEXT, ContentType="application/json", InferenceComponentName="ic-one"
    )
    assert "embeddings" in json.loads(answer["Body"].read())
    no_name = error_of(
        client.invoke_endpoint, EndpointName="ep-ic", Body=ONE_TEXT, ContentType="application/json"
    )
    assert "Inference Component Name header is required" in no_name["Message"]
    # When it scales to zero copies, calls fail at once with the field's text (F12)
    sagemaker.update_inference_component_runtime_config(
        InferenceComponentName="ic-one", DesiredRuntimeConfig={"CopyCount": 0}
    )
    scaled = wait_for(component, lambda d: d["InferenceComponentStatus"] == "InService")[-1]
    assert scaled["RuntimeConfig"] == {"DesiredCopyCount": 0, "CurrentCopyCount": 0}
    started = time.monotonic()
    zero = error_of(
        client.invoke_endpoint,
        EndpointName="ep-ic",
        Body=ONE_TEXT,
        ContentType="application/json",
        InferenceComponentName="ic-one",
    )
    assert zero == {
        "Code": "ValidationError",
        "Message": "Inference Component has no capacity to process this request",
    }
    assert time.monotonic() - started < 5
    # And the endpoint cannot be deleted before its component
    assert "inference components" in error_of(sagemaker.delete_endpoint, EndpointName="ep-ic")["Message"]
    sagemaker.delete_inference_component(InferenceComponentName="ic-one")
    sagemaker.delete_endpoint(EndpointName="ep-ic")
    assert sagemaker.list_inference_components()["InferenceComponents"] == []


def test_light_server_stops_on_a_top_level_manifest_json_as_mms_does(tmp_path: Path) -> None:
    from workflows.local.sagemaker.light_server import legacy_archive_error

    # Given a model folder with a manifest.json MMS would take for a legacy archive manifest
    (tmp_path / "manifest.json").write_text('{"onnx_file": "model.onnx"}')
    # Then the light server fails as MMS 1.1.11 does; a legacy manifest with its model entry passes
    assert "LegacyManifest$ModelInfo.getModelName()" in str(legacy_archive_error(str(tmp_path)))
    (tmp_path / "manifest.json").write_text('{"model": {"modelName": "m", "handler": "h"}}')
    assert legacy_archive_error(str(tmp_path)) is None


def test_an_unknown_server_choice_is_refused_naming_the_choices() -> None:
    from workflows.container.environment import DlcUnavailable, resolve_serving_stack

    with pytest.raises(DlcUnavailable, match="use auto, mms or light"):
        resolve_serving_stack("tomcat")


def test_light_server_error_bodies_are_byte_for_byte_those_of_mms() -> None:
    from workflows.local.sagemaker.light_server import _error_body

    # Then a handler error reads as MMS writes it (Gson: pretty-printed, HTML-unsafe characters escaped)
    observed_from_mms = (
        b'{\n  "code": 400,\n  "type": "InternalServerException",\n'
        b'  "message": "No module named \\u0027onnxruntime\\u0027"\n}\n'
    )
    assert _error_body("No module named 'onnxruntime'") == observed_from_mms
