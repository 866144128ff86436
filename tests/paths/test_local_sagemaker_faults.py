"""The fault plan: the local SageMaker reproduces the field's failures on demand, with the field's texts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.conftest import serving_processes
from tests.support.local_sagemaker import (
    HF_IMAGE,
    ONE_TEXT,
    ROLE,
    VLLM_IMAGE,
    container,
    deploy,
    endpoint_settled,
    leftover_cgroups,
    log_text,
    runtime,
    upload_artifact,
    wait_for,
)
from workflows import clock
from workflows.hosting.polling import stalled_for
from workflows.local.engine import LocalEngine
from workflows.local.faults import Fault, FaultPlan


@pytest.fixture
def make_engine(tmp_path: Path) -> Iterator[Any]:
    engines: list[LocalEngine] = []

    def make(*faults: Fault) -> LocalEngine:
        engine = LocalEngine(
            workdir=tmp_path / "engine", serving="light", fault_plan=FaultPlan(faults=list(faults))
        )
        engines.append(engine.__enter__())
        return engine

    yield make
    for engine in engines:
        engine.__exit__(None, None, None)
    assert serving_processes() == []
    assert [leftover_cgroups(engine) for engine in engines] == [[] for _ in engines]


def error_of(call: Any, **kwargs: Any) -> dict[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    return dict(caught.value.response["Error"])


def direct_model(uri: str, images: tuple[str, str] = (HF_IMAGE, HF_IMAGE)) -> dict[str, Any]:
    return {
        "Containers": [
            {**container(uri, image=images[0]), "ContainerHostname": "first"},
            {**container(uri, image=images[1]), "ContainerHostname": "second"},
        ],
        "InferenceExecutionConfig": {"Mode": "Direct"},
    }


def test_f04_gpu_instance_in_direct_mode_is_refused_only_on_the_planned_types(
    make_engine: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    engine = make_engine(Fault(id="F04", instance_types=["ml.g5.xlarge"]))
    uri = upload_artifact(engine, tiny_artifact, "m/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    # Given a Direct multi-container model on ml.g5.xlarge
    sagemaker.create_model(ModelName="m", ExecutionRoleArn=ROLE, **direct_model(uri))
    for name, instance_type in (("on-g5", "ml.g5.xlarge"), ("on-g5-2x", "ml.g5.2xlarge")):
        sagemaker.create_endpoint_config(
            EndpointConfigName=name,
            ProductionVariants=[
                {
                    "VariantName": "primary",
                    "ModelName": "m",
                    "InstanceType": instance_type,
                    "InitialInstanceCount": 1,
                }
            ],
        )
    # When the endpoint is created on the planned type, CreateEndpoint is refused with the field's text
    error = error_of(sagemaker.create_endpoint, EndpointName="on-g5", EndpointConfigName="on-g5")
    assert error == {
        "Code": "ValidationException",
        "Message": "Instance type ml.g5.xlarge is not supported for a Model using Direct InferenceExecutionMode",
    }
    assert sagemaker.list_endpoints()["Endpoints"] == []
    # Then a type the plan does not name is accepted
    sagemaker.create_endpoint(EndpointName="on-g5-2x", EndpointConfigName="on-g5-2x")
    assert sagemaker.describe_endpoint(EndpointName="on-g5-2x")["EndpointStatus"] == "Creating"


def test_f05_multi_container_image_without_bind_to_port_label_is_refused(
    make_engine: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    engine = make_engine(Fault(id="F05"))
    uri = upload_artifact(engine, tiny_artifact, "m/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    # When a Direct model co-hosts the vLLM image (no accept-bind-to-port label)
    error = error_of(
        sagemaker.create_model,
        ModelName="vllm",
        ExecutionRoleArn=ROLE,
        **direct_model(uri, (HF_IMAGE, VLLM_IMAGE)),
    )
    # Then CreateModel is refused with the field's text
    assert error["Code"] == "ValidationException"
    assert "does not contain required accept-bind-to-port=true Docker label" in error["Message"]
    assert VLLM_IMAGE in error["Message"]
    # And two HF images (which carry the label) are accepted
    sagemaker.create_model(ModelName="hf", ExecutionRoleArn=ROLE, **direct_model(uri))
    assert [m["ModelName"] for m in sagemaker.list_models()["Models"]] == ["hf"]


def test_f06_capacity_stall_has_no_variants_a_frozen_timestamp_then_fails_with_an_empty_reason(
    make_engine: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    engine = make_engine(Fault(id="F06", instance_types=["ml.g5.12xlarge"], stall_minutes=50))
    uri = upload_artifact(engine, tiny_artifact, "m/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    # Given an endpoint on a type with no capacity
    deploy(sagemaker, "stalled", {"PrimaryContainer": container(uri)}, instance_type="ml.g5.12xlarge")
    early = sagemaker.describe_endpoint(EndpointName="stalled")
    # Then it is Creating, with no ProductionVariants and LastModifiedTime 1 s after creation
    assert early["EndpointStatus"] == "Creating" and "ProductionVariants" not in early
    assert early["LastModifiedTime"] - early["CreationTime"] == timedelta(seconds=1)
    # And its pending deployment waits for 0 of 1 instances, as AWS's does while Creating
    [waiting] = early["PendingDeploymentSummary"]["ProductionVariants"]
    assert (waiting["InstanceType"], waiting["CurrentInstanceCount"], waiting["DesiredInstanceCount"]) == (
        "ml.g5.12xlarge",
        0,
        1,
    )
    assert [s["Status"] for s in waiting["VariantStatus"]] == ["Creating"]
    assert stalled_for(early, early["CreationTime"] + timedelta(minutes=9)) == 9 * 60 - 1
    # When 50 (simulated) minutes pass, it fails with an empty FailureReason, still without variants
    clock.advance(50 * 60)
    final = endpoint_settled(sagemaker, "stalled", timeout_s=30)[-1]
    assert final["EndpointStatus"] == "Failed"
    assert final["FailureReason"] == ""
    assert "ProductionVariants" not in final
    assert "PendingDeploymentSummary" not in final


def test_f06_on_every_pool_type_stalls_with_each_pool_at_zero_then_fails_at_the_provision_timeout(
    make_engine: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    engine = make_engine(Fault(id="F06", instance_types=["ml.g6.xlarge", "ml.g5.xlarge"], stall_minutes=50))
    uri = upload_artifact(engine, tiny_artifact, "m/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    # Given a pooled variant (ml.g6.xlarge, then ml.g5.xlarge; 600 s provision timeout), both out of capacity
    sagemaker.create_model(ModelName="pooled", ExecutionRoleArn=ROLE, PrimaryContainer=container(uri))
    pools = [{"InstanceType": "ml.g6.xlarge", "Priority": 1}, {"InstanceType": "ml.g5.xlarge", "Priority": 2}]
    variant = {
        "VariantName": "primary",
        "ModelName": "pooled",
        "InitialInstanceCount": 1,
        "InstancePools": pools,
    }
    sagemaker.create_endpoint_config(
        EndpointConfigName="pooled",
        ProductionVariants=[{**variant, "VariantInstanceProvisionTimeoutInSeconds": 600}],
    )
    sagemaker.create_endpoint(EndpointName="pooled", EndpointConfigName="pooled")
    early = sagemaker.describe_endpoint(EndpointName="pooled")
    # Then it is Creating with no variants, its pending deployment reports each pool at 0, no one type
    assert early["EndpointStatus"] == "Creating" and "ProductionVariants" not in early
    [waiting] = early["PendingDeploymentSummary"]["ProductionVariants"]
    assert "InstanceType" not in waiting
    assert waiting["InstancePools"] == [
        {"InstanceType": "ml.g6.xlarge", "CurrentInstanceCount": 0},
        {"InstanceType": "ml.g5.xlarge", "CurrentInstanceCount": 0},
    ]
    # When the 600 s provision timeout passes (simulated), long before the 50-minute stall
    clock.advance(601)
    final = endpoint_settled(sagemaker, "pooled", timeout_s=30)[-1]
    # Then SageMaker's fallback gave up: Failed, still without variants
    assert final["EndpointStatus"] == "Failed" and "ProductionVariants" not in final
    # And a pool's override model must exist (CreateEndpointConfig refuses an unknown one)
    with pytest.raises(ClientError, match="pooled-cpu"):
        sagemaker.create_endpoint_config(
            EndpointConfigName="override",
            ProductionVariants=[
                {**variant, "InstancePools": [{**pools[0], "ModelNameOverride": "pooled-cpu"}]}
            ],
        )


def ic_endpoint(engine: LocalEngine, uri: str, instance_type: str) -> Any:
    sagemaker = engine.client("sagemaker")
    sagemaker.create_model(ModelName="m", ExecutionRoleArn=ROLE, PrimaryContainer=container(uri))
    sagemaker.create_endpoint_config(
        EndpointConfigName="ic",
        ExecutionRoleArn=ROLE,
        ProductionVariants=[
            {"VariantName": "primary", "InstanceType": instance_type, "InitialInstanceCount": 1}
        ],
    )
    sagemaker.create_endpoint(EndpointName="ep-ic", EndpointConfigName="ic")
    assert endpoint_settled(sagemaker, "ep-ic")[-1]["EndpointStatus"] == "InService"
    return sagemaker


def create_component(sagemaker: Any, name: str, copies: int, **requirements: int) -> dict[str, Any]:
    sagemaker.create_inference_component(
        InferenceComponentName=name,
        EndpointName="ep-ic",
        VariantName="primary",
        Specification={
            "ModelName": "m",
            "ComputeResourceRequirements": {"MinMemoryRequiredInMb": 1024, **requirements},
        },
        RuntimeConfig={"CopyCount": copies},
    )
    return wait_for(
        lambda: sagemaker.describe_inference_component(InferenceComponentName=name),
        lambda d: d["InferenceComponentStatus"] != "Creating",
    )[-1]


def test_f08_and_f09_accelerators_must_be_named_and_copies_beyond_the_gpus_are_not_placed(
    make_engine: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    engine = make_engine(Fault(id="F08", times=1), Fault(id="F09"))
    uri = upload_artifact(engine, tiny_artifact, "m/model.tar.gz", tmp_path)
    sagemaker = ic_endpoint(engine, uri, "ml.g5.xlarge")
    # When a component on a GPU instance names no accelerator count (F08)
    error = error_of(
        sagemaker.create_inference_component,
        InferenceComponentName="no-devices",
        EndpointName="ep-ic",
        VariantName="primary",
        Specification={"ModelName": "m", "ComputeResourceRequirements": {"MinMemoryRequiredInMb": 1024}},
        RuntimeConfig={"CopyCount": 1},
    )
    assert error == {
        "Code": "ValidationException",
        "Message": "Number of accelerator devices required must be specified for ml.g5.xlarge",
    }
    # When it asks for 2 copies of 1 device on a 1-GPU instance (F09): InService with 1 of 2
    first = create_component(sagemaker, "two-copies", 2, NumberOfAcceleratorDevicesRequired=1)
    assert first["InferenceComponentStatus"] == "InService"
    assert first["RuntimeConfig"] == {"DesiredCopyCount": 2, "CurrentCopyCount": 1}
    # And another component gets no device at all
    second = create_component(sagemaker, "no-gpu-left", 1, NumberOfAcceleratorDevicesRequired=1)
    assert second["InferenceComponentStatus"] == "Failed"
    assert second["FailureReason"] == "SageMaker was able to deploy 0 out of 1 requested copies"
    for name in ("two-copies", "no-gpu-left"):
        sagemaker.delete_inference_component(InferenceComponentName=name)


def test_f10_and_f12_memory_sized_to_the_instance_fails_and_zero_capacity_recovers_after_the_planned_calls(
    make_engine: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    engine = make_engine(Fault(id="F10", memory_limit_mb=1024), Fault(id="F12", times=2))
    uri = upload_artifact(engine, tiny_artifact, "m/model.tar.gz", tmp_path)
    sagemaker = ic_endpoint(engine, uri, "ml.c6i.xlarge")
    # When MinMemoryRequiredInMb is sized to the instance (F10)
    big = create_component(sagemaker, "big", 1, MinMemoryRequiredInMb=6144)
    assert big["InferenceComponentStatus"] == "Failed"
    assert big["FailureReason"] == "There is not enough memory available for this Inference Component"
    # Then stepping it down to what fits works
    small = create_component(sagemaker, "small", 1, MinMemoryRequiredInMb=1024)
    assert small["InferenceComponentStatus"] == "InService"
    # When the component has no capacity for the planned 2 calls (F12), they fail at once; the next succeeds
    client = runtime(engine)
    outcomes = []
    for _ in range(3):
        try:
            client.invoke_endpoint(
                EndpointName="ep-ic",
                Body=ONE_TEXT,
                ContentType="application/json",
                InferenceComponentName="small",
            )["Body"].read()
            outcomes.append("ok")
        except ClientError as error:
            outcomes.append(f"{error.response['Error']['Code']}: {error.response['Error']['Message']}")
    no_capacity = "ValidationError: Inference Component has no capacity to process this request"
    assert outcomes == [no_capacity, no_capacity, "ok"]
    for name in ("big", "small"):
        sagemaker.delete_inference_component(InferenceComponentName=name)


def test_f20_gpu_endpoint_without_ami_version_fails_with_error_803_and_the_newer_ami_comes_up(
    make_engine: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    engine = make_engine(Fault(id="F20", instance_types=["ml.g5.xlarge"]))
    uri = upload_artifact(engine, tiny_artifact, "m/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    # When a GPU endpoint has no InferenceAmiVersion
    deploy(sagemaker, "default-ami", {"PrimaryContainer": container(uri)}, instance_type="ml.g5.xlarge")
    failed = endpoint_settled(sagemaker, "default-ami")[-1]
    # Then it fails its health check, and its CloudWatch log has the driver error
    assert failed["EndpointStatus"] == "Failed"
    assert "did not pass the ping health check" in failed["FailureReason"]
    assert "System has unsupported display driver / cuda driver combination (error 803)" in log_text(
        engine, "/aws/sagemaker/Endpoints/default-ami"
    )
    # When it is redeployed with the newer AMI, it comes up in forward-compatibility mode
    deploy(
        sagemaker,
        "newer-ami",
        {"PrimaryContainer": container(uri)},
        instance_type="ml.g5.xlarge",
        InferenceAmiVersion="al2023-ami-sagemaker-inference-gpu-4-1",
    )
    assert endpoint_settled(sagemaker, "newer-ami")[-1]["EndpointStatus"] == "InService"
    text = wait_for(
        lambda: {"text": log_text(engine, "/aws/sagemaker/Endpoints/newer-ami")},
        lambda d: "CUDA Forward Compatibility mode ENABLED" in d["text"],
        timeout_s=30,
    )[-1]["text"]
    assert "error 803" not in text
    for name in ("default-ami", "newer-ami"):
        sagemaker.delete_endpoint(EndpointName=name)
