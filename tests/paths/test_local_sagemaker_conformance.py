"""Conformance: the same calls against moto's SageMaker and the local one give the same shapes.

Three rules, so that drift on either side is caught: every field the local SageMaker returns exists
in botocore's output shape of the operation (nothing invented); every field moto returns with a
value, the local SageMaker returns too, with the same type (nothing missing); identifiers (ARNs)
are equal. Empty structures moto adds (``VpcConfig: {}``, ``DataCaptureConfig: {}``) are not fields
AWS returns, and are skipped. Errors: the same code; the local message is AWS's (double quotes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.support.local_sagemaker import ROLE, container, upload_artifact, wait_for
from workflows.local.engine import BUCKET, REGION, LocalEngine

Client = Any


def typed(value: Any) -> Any:
    """The shape of a parsed response: nested keys and leaf type names."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items() if k != "ResponseMetadata"}
    if isinstance(value, list):
        return [typed(value[0])] if value else []
    return type(value).__name__


def unknown_fields(value: Any, shape: Any, path: str = "") -> list[str]:
    """Fields of ``value`` that botocore's ``shape`` does not define."""
    if isinstance(value, dict) and shape.type_name == "structure":
        found = []
        for key, item in value.items():
            if key == "ResponseMetadata":
                continue
            if key not in shape.members:
                found.append(f"{path}{key}")
            else:
                found += unknown_fields(item, shape.members[key], f"{path}{key}.")
        return found
    if isinstance(value, dict) and shape.type_name == "map":
        return [f for item in value.values() for f in unknown_fields(item, shape.value, path)]
    if isinstance(value, list) and shape.type_name == "list":
        return [f for item in value for f in unknown_fields(item, shape.member, f"{path}[].")]
    return []


def missing_fields(moto: Any, local: Any, path: str = "") -> list[str]:
    """Fields moto returns with a value that the local response lacks or types differently."""
    if isinstance(moto, dict):
        if not isinstance(local, dict):
            return [f"{path} is {type(local).__name__}"]
        found = []
        for key, item in moto.items():
            if item in ({}, []):  # moto's empty placeholders
                continue
            if key not in local:
                found.append(f"{path}{key}")
            else:
                found += missing_fields(item, local[key], f"{path}{key}.")
        return found
    if isinstance(moto, list):
        if not moto or not local:
            return [] if bool(moto) == bool(local) else [f"{path}[] empty on one side"]
        return missing_fields(moto[0], local[0], f"{path}[].")
    return [] if moto == local else [f"{path} {moto} != {local}"]


@pytest.fixture(scope="module")
def clients(
    tiny_artifact: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Client, Client, str]]:
    tmp = tmp_path_factory.mktemp("conformance")
    with LocalEngine(workdir=tmp / "engine", serving="light") as engine:
        uri = upload_artifact(engine, tiny_artifact, "conformance/model.tar.gz", tmp)
        engine.client("s3").put_object(Bucket=BUCKET, Key="conformance/input/data.txt", Body=b"1")
        # An explicit AWS endpoint URL overrides AWS_ENDPOINT_URL_SAGEMAKER: that client reaches moto.
        moto = boto3.client(
            "sagemaker", region_name=REGION, endpoint_url=f"https://api.sagemaker.{REGION}.amazonaws.com"
        )
        yield moto, engine.client("sagemaker"), uri


def same_call(clients: tuple[Client, Client, str], operation: str, **kwargs: Any) -> tuple[Any, Any]:
    moto, local, _ = clients
    moto_answer = getattr(moto, operation)(**kwargs)
    local_answer = getattr(local, operation)(**kwargs)
    output_shape = local.meta.service_model.operation_model(
        local.meta.method_to_api_mapping[operation]
    ).output_shape
    if output_shape is None:
        assert typed(local_answer) == {}, f"{operation} has no output"
    else:
        assert unknown_fields(local_answer, output_shape) == [], (
            f"{operation}: fields botocore does not define"
        )
    assert missing_fields(typed(moto_answer), typed(local_answer)) == [], f"{operation}: fields moto has"
    return moto_answer, local_answer


def test_models_configs_endpoints_and_tags_answer_with_the_same_shapes(
    clients: tuple[Client, Client, str],
) -> None:
    uri = clients[2]
    calls: list[tuple[str, dict[str, Any], Callable[[Any, Any], None]]] = []

    def same_arn(key: str) -> Callable[[Any, Any], None]:
        def check(moto: Any, local: Any) -> None:
            assert moto[key] == local[key]

        return check

    variant = {
        "VariantName": "primary",
        "ModelName": "conf",
        "InstanceType": "ml.c5.xlarge",
        "InitialInstanceCount": 1,
    }
    calls += [
        ("create_model", {"ModelName": "conf", "ExecutionRoleArn": ROLE, "PrimaryContainer": container(uri), "Tags": [{"Key": "run", "Value": "x"}]}, same_arn("ModelArn")),
        ("describe_model", {"ModelName": "conf"}, same_arn("ModelArn")),
        ("list_models", {}, lambda m, x: None),
        ("create_endpoint_config", {"EndpointConfigName": "conf", "ProductionVariants": [variant]}, same_arn("EndpointConfigArn")),
        ("describe_endpoint_config", {"EndpointConfigName": "conf"}, same_arn("EndpointConfigArn")),
        ("list_endpoint_configs", {}, lambda m, x: None),
        ("create_endpoint", {"EndpointName": "conf", "EndpointConfigName": "conf"}, same_arn("EndpointArn")),
    ]  # fmt: skip
    # When the same calls go to both
    answers = {}
    for operation, kwargs, check in calls:
        moto_answer, local_answer = same_call(clients, operation, **kwargs)
        check(moto_answer, local_answer)
        answers[operation] = local_answer
    # Then the endpoint's description matches once both are InService (moto's is at once)
    wait_for(
        lambda: clients[1].describe_endpoint(EndpointName="conf"),
        lambda d: d["EndpointStatus"] == "InService",
    )
    moto_endpoint, local_endpoint = same_call(clients, "describe_endpoint", EndpointName="conf")
    assert moto_endpoint["EndpointArn"] == local_endpoint["EndpointArn"]
    same_call(clients, "list_endpoints")
    # And tags behave alike
    arn = answers["create_model"]["ModelArn"]
    same_call(clients, "add_tags", ResourceArn=arn, Tags=[{"Key": "team", "Value": "y"}])
    moto_tags, local_tags = same_call(clients, "list_tags", ResourceArn=arn)
    assert (
        sorted(t["Key"] for t in moto_tags["Tags"])
        == sorted(t["Key"] for t in local_tags["Tags"])
        == ["run", "team"]
    )
    same_call(clients, "delete_tags", ResourceArn=arn, TagKeys=["team"])
    for operation, kwargs in (
        ("delete_endpoint", {"EndpointName": "conf"}),
        ("delete_endpoint_config", {"EndpointConfigName": "conf"}),
        ("delete_model", {"ModelName": "conf"}),
    ):
        same_call(clients, operation, **kwargs)


def test_processing_jobs_answer_with_the_same_shapes(clients: tuple[Client, Client, str]) -> None:
    job = {
        "ProcessingJobName": "conf-job",
        "RoleArn": ROLE,
        "ProcessingResources": {"ClusterConfig": {"InstanceCount": 1, "InstanceType": "ml.m5.large", "VolumeSizeInGB": 10}},
        "StoppingCondition": {"MaxRuntimeInSeconds": 60},
        "AppSpecification": {"ImageUri": "image", "ContainerEntrypoint": ["python3", "-c", "print('done')"]},
        "ProcessingInputs": [
            {"InputName": "data", "S3Input": {"S3Uri": f"s3://{BUCKET}/conformance/input/", "LocalPath": "/opt/ml/processing/input", "S3DataType": "S3Prefix", "S3InputMode": "File"}}
        ],
        "ProcessingOutputConfig": {
            "Outputs": [{"OutputName": "out", "S3Output": {"S3Uri": f"s3://{BUCKET}/conformance/out/", "LocalPath": "/opt/ml/processing/output", "S3UploadMode": "EndOfJob"}}]
        },
    }  # fmt: skip
    moto_created, local_created = same_call(clients, "create_processing_job", **job)
    assert moto_created["ProcessingJobArn"] == local_created["ProcessingJobArn"]
    # moto completes a job at once; the local one runs it first
    wait_for(
        lambda: clients[1].describe_processing_job(ProcessingJobName="conf-job"),
        lambda d: d["ProcessingJobStatus"] == "Completed",
        timeout_s=60,
    )
    same_call(clients, "describe_processing_job", ProcessingJobName="conf-job")
    same_call(clients, "list_processing_jobs")


@pytest.mark.parametrize(
    ("operation", "kwargs", "message"),
    [
        ("describe_model", {"ModelName": "nope"}, 'Could not find model "arn:aws:sagemaker:us-east-1:123456789012:model/nope".'),
        ("delete_endpoint", {"EndpointName": "nope"}, 'Could not find endpoint "arn:aws:sagemaker:us-east-1:123456789012:endpoint/nope".'),
        ("describe_endpoint_config", {"EndpointConfigName": "nope"}, 'Could not find endpoint configuration "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/nope".'),
    ],
)  # fmt: skip
def test_unknown_resources_answer_with_the_same_error_code(
    clients: tuple[Client, Client, str], operation: str, kwargs: dict[str, Any], message: str
) -> None:
    errors = []
    for client in clients[:2]:
        with pytest.raises(ClientError) as caught:
            getattr(client, operation)(**kwargs)
        errors.append(caught.value.response["Error"])
    # Then both answer ValidationException; the local text is AWS's (moto quotes the ARN with ' ')
    assert errors[0]["Code"] == errors[1]["Code"] == "ValidationException"
    assert errors[1]["Message"] == message
