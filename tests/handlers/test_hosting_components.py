"""Inference components and scale to zero: the exact SageMaker, Application Auto Scaling and CloudWatch
calls (botocore Stubber: moto has no inference components and refuses their scalable dimension)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from botocore.stub import ANY

from tests.support.hosting import (
    ARTIFACT,
    GPU_IMAGE,
    NOW,
    ROLE,
    SETTINGS,
    client,
    describe_request,
    request,
    stubbed,
)
from workflows import clock
from workflows.contracts import DeployOverrides, DeployResult
from workflows.errors import InferenceComponentFailed, PreflightBlocked
from workflows.hosting.create_calls import model_server_environment
from workflows.hosting.scale_to_zero import DIMENSION, TRACKED_METRIC
from workflows.steps.deploy_endpoint import deploy
from workflows.steps.describe_endpoint import describe
from workflows.steps.place_inference_components import place_inference_components

ENDPOINT = "db-run-1-a1"
IC0, IC1 = "db-run-1-a1-ic0", "db-run-1-a1-ic1"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:inference-component/db-run-1-a1-ic0"
GPU = {"instance_type_fallbacks": ["ml.g6.12xlarge"], "accelerator_devices": 1}


def expect_models(stub: Any, req: Any, count: int) -> None:
    env = model_server_environment(req.spec.hosting)
    for index in range(count):
        stub.add_response(
            "create_model",
            {"ModelArn": ARN},
            {
                "ModelName": f"db-run-1-a1-m{index}",
                "ExecutionRoleArn": ROLE,
                "Tags": ANY,
                "PrimaryContainer": {"Image": GPU_IMAGE, "ModelDataUrl": ARTIFACT, "Environment": env},
            },
        )


def deploy_components(
    hosting: dict[str, Any],
    *,
    overrides: DeployOverrides | None = None,
    variant: dict[str, Any] | None = None,
) -> tuple[Any, DeployResult]:
    """Deploy an IC endpoint on stubbed SageMaker; ``variant``: the keys its production variant adds."""
    req = request({"mode": "inference-component", **GPU, **hosting}, overrides=overrides)
    instance_type = req.spec.hosting.instance_type_fallbacks[0]
    count = 1 + len(hosting.get("models", []))
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_models(stub, req, count)
        stub.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": ARN},
            {
                "MetricsConfig": {
                    "EnableEnhancedMetrics": True,
                    "EnableDetailedObservability": True,
                    "MetricPublishFrequencyInSeconds": 10,
                },
                "EndpointConfigName": "db-run-1-a1",
                "Tags": ANY,
                "ExecutionRoleArn": ROLE,
                "ProductionVariants": [
                    {
                        "VariantName": "primary",
                        "InstanceType": instance_type,
                        "InitialInstanceCount": 1,
                        "ManagedInstanceScaling": {
                            "Status": "ENABLED",
                            "MinInstanceCount": 1,
                            "MaxInstanceCount": 1,
                        },
                        "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
                        **(variant or {}),
                    }
                ],
            },
        )
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": ARN},
            {"EndpointName": ENDPOINT, "EndpointConfigName": "db-run-1-a1", "Tags": ANY},
        )
        return req, deploy(req, sagemaker=sagemaker, settings=SETTINGS)


def test_an_ic_endpoint_has_no_model_and_one_model_per_component() -> None:
    # Given two models as components on a 4-GPU instance
    _, result = deploy_components({"models": [{"name": "nli", "copies": 2}]})
    # Then the components are left for the wait loop (they need an InService endpoint)
    assert result.inference_components == [IC0, IC1]
    assert result.target == {"InferenceComponentName": IC0}
    assert result.targets["nli"] == {"InferenceComponentName": IC1}


@pytest.mark.parametrize(
    ("hosting", "finding"),
    [
        ({"accelerator_devices": None, "instance_type_fallbacks": ["ml.g5.xlarge"]}, "F08"),
        ({"instance_type_fallbacks": ["ml.g5.xlarge"], "copies": 2}, "F09"),
    ],
)
def test_gpu_components_without_devices_or_beyond_the_gpus_are_refused_before_any_call(
    hosting: dict[str, Any], finding: str
) -> None:
    req = request({"mode": "inference-component", **GPU, **hosting})
    with stubbed("sagemaker") as (sagemaker, _), pytest.raises(PreflightBlocked, match=finding):
        deploy(req, sagemaker=sagemaker, settings=SETTINGS)


def component(
    name: str, status: str, desired: int, current: int, reason: str | None = None
) -> dict[str, Any]:
    described: dict[str, Any] = {
        "InferenceComponentName": name,
        "InferenceComponentArn": ARN,
        "EndpointName": ENDPOINT,
        "EndpointArn": ARN,
        "InferenceComponentStatus": status,
        "RuntimeConfig": {"DesiredCopyCount": desired, "CurrentCopyCount": current},
        "CreationTime": NOW,
        "LastModifiedTime": NOW,
    }
    if reason:
        described["FailureReason"] = reason
    return described


def endpoint(status: str = "InService") -> dict[str, Any]:
    return {
        "EndpointName": ENDPOINT,
        "EndpointArn": ARN,
        "EndpointConfigName": "db-run-1-a1",
        "EndpointStatus": status,
        "CreationTime": NOW,
        "LastModifiedTime": NOW,
        "ProductionVariants": [{"VariantName": "primary", "CurrentInstanceCount": 1}],
    }


def expect_component(stub: Any, requirements: dict[str, Any], startup: Any, copies: int = 1) -> None:
    """CreateInferenceComponent of the main model's component, as the Stubber expects it."""
    stub.add_response(
        "create_inference_component",
        {"InferenceComponentArn": ARN},
        {
            "InferenceComponentName": IC0,
            "EndpointName": ENDPOINT,
            "VariantName": "primary",
            "Specification": {
                "ModelName": "db-run-1-a1-m0",
                "ComputeResourceRequirements": requirements,
                "StartupParameters": startup,
            },
            "RuntimeConfig": {"CopyCount": copies},
            "Tags": ANY,
        },
    )


def not_found(stub: Any, name: str) -> None:
    stub.add_client_error(
        "describe_inference_component",
        service_error_code="ValidationException",
        service_message=f'Could not find inference component "{ARN}".',
        expected_params={"InferenceComponentName": name},
    )


def test_describe_endpoint_creates_nothing_and_hands_an_inservice_ic_endpoint_to_placement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW + timedelta(minutes=5))
    # Given a deployed IC endpoint, now InService, whose component does not exist yet
    req, result = deploy_components({})
    poll = describe_request(req, result.model_copy(update={"created_at": NOW}))
    # When DescribeEndpoint polls, on a client that refuses any call but DescribeEndpoint
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response("describe_endpoint", endpoint(), {"EndpointName": ENDPOINT})
        status = describe(poll, sagemaker=sagemaker)
        stub.assert_no_pending_responses()
    # Then the endpoint is InService, the hosting is not ready, and placement comes next
    assert (status.status, status.endpoint_status, status.phase) == ("Creating", "InService", "components")
    assert status.components == []


def test_placement_creates_components_once_the_endpoint_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW + timedelta(minutes=5))
    # Given a deployed IC endpoint, now InService, whose component does not exist yet (F10: 1024 MB)
    req, result = deploy_components({}, overrides=DeployOverrides(ic_min_memory_mb=1024))
    poll = describe_request(req, result.model_copy(update={"created_at": NOW}))
    with stubbed("sagemaker") as (sagemaker, stub):
        not_found(stub, IC0)
        expect_component(
            stub,
            {"MinMemoryRequiredInMb": 1024, "NumberOfAcceleratorDevicesRequired": 1},
            {"ContainerStartupHealthCheckTimeoutInSeconds": 600, "ModelDataDownloadTimeoutInSeconds": 600},
        )
        # When PlaceInferenceComponents polls
        status = place_inference_components(poll, sagemaker=sagemaker)
    # Then the endpoint is InService but the hosting is not ready: the component is Creating
    assert (status.status, status.endpoint_status, status.phase) == ("Creating", "InService", "components")
    assert status.components[0].name == IC0
    # And once the component serves every copy, the hosting is InService
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response(
            "describe_inference_component", component(IC0, "InService", 1, 1), {"InferenceComponentName": IC0}
        )
        placed = place_inference_components(poll, sagemaker=sagemaker)
    assert (placed.status, placed.phase) == ("InService", "ready")


@pytest.mark.parametrize(
    ("described", "text"),
    [
        (component(IC0, "InService", 2, 1), "able to deploy 1 out of 2 requested copies"),
        (
            component(
                IC0, "Failed", 1, 0, "There is not enough memory available for this Inference Component"
            ),
            "not enough memory available",
        ),
    ],
)
def test_a_component_short_of_copies_or_failed_fails_the_wait(
    described: dict[str, Any], text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.diagnosis import diagnose
    from workflows.diagnosis.collect import evidence_from_text

    monkeypatch.setattr(clock, "now", lambda: NOW + timedelta(minutes=5))
    req, result = deploy_components({})
    poll = describe_request(req, result.model_copy(update={"created_at": NOW}))
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response("describe_inference_component", described, {"InferenceComponentName": IC0})
        with pytest.raises(InferenceComponentFailed) as raised:
            place_inference_components(poll, sagemaker=sagemaker)
    # Then the message carries the field's text and the endpoint's instance type, which the diagnosis reads
    assert text in str(raised.value) and "ml.g6.12xlarge" in str(raised.value)
    diagnosis = diagnose(evidence_from_text(str(raised.value), origin="error"))
    if "copies" in text:
        # SageMaker's own count names the GPU cap, or leaves it open beside memory (F10)
        assert diagnosis.id == "F09" or "F09" in diagnosis.title
    else:
        assert diagnosis.id == "F10"


def scale_to_zero_plan_calls(stub: Any, name: str) -> None:
    target = {
        "ServiceNamespace": "sagemaker",
        "ResourceId": f"inference-component/{name}",
        "ScalableDimension": DIMENSION,
    }
    stub.add_response("register_scalable_target", {}, {**target, "MinCapacity": 0, "MaxCapacity": 2})
    stub.add_response(
        "put_scaling_policy",
        {
            "PolicyARN": "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:resource/x:policyName/t",
            "Alarms": [],
        },
        {
            **target,
            "PolicyName": f"{name}-target-tracking",
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": {
                "PredefinedMetricSpecification": {"PredefinedMetricType": TRACKED_METRIC},
                "TargetValue": 4.0,
                "ScaleInCooldown": 300,
                "ScaleOutCooldown": 60,
            },
        },
    )
    stub.add_response(
        "put_scaling_policy",
        {"PolicyARN": STEP_ARN, "Alarms": []},
        {
            **target,
            "PolicyName": f"{name}-scale-out-from-zero",
            "PolicyType": "StepScaling",
            "StepScalingPolicyConfiguration": {
                "AdjustmentType": "ChangeInCapacity",
                "MetricAggregationType": "Maximum",
                "Cooldown": 60,
                "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
            },
        },
    )


STEP_ARN = "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:2:resource/x:policyName/step"


def test_scale_to_zero_registers_target_both_policies_and_the_no_capacity_alarm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW + timedelta(minutes=5))
    # Given a scale-to-zero deploy (MinInstanceCount 0) whose component now serves
    req = request({"mode": "scale-to-zero", **GPU, "max_copies": 2})
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_models(stub, req, 1)
        stub.add_response("create_endpoint_config", {"EndpointConfigArn": ARN}, {
            "EndpointConfigName": "db-run-1-a1", "Tags": ANY, "ExecutionRoleArn": ROLE, "MetricsConfig": {"EnableEnhancedMetrics": True, "EnableDetailedObservability": True, "MetricPublishFrequencyInSeconds": 10},
            "ProductionVariants": [{
                "VariantName": "primary", "InstanceType": "ml.g6.12xlarge", "InitialInstanceCount": 1,
                "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 1},
                "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
            }],
        })  # fmt: skip
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": ARN},
            {"EndpointName": ENDPOINT, "EndpointConfigName": "db-run-1-a1", "Tags": ANY},
        )
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    poll = describe_request(req, result.model_copy(update={"created_at": NOW}))
    with (
        stubbed("sagemaker") as (sagemaker, sm),
        stubbed("application-autoscaling") as (autoscaling, aas),
        stubbed("cloudwatch") as (cloudwatch, cw),
    ):
        sm.add_response(
            "describe_inference_component", component(IC0, "InService", 1, 1), {"InferenceComponentName": IC0}
        )
        scale_to_zero_plan_calls(aas, IC0)
        # The field's alarm: Period 30, EvaluationPeriods 1, Threshold 1, >=, missing data is missing (F12)
        cw.add_response(
            "put_metric_alarm",
            {},
            {
                "AlarmName": f"{IC0}-no-capacity",
                "AlarmDescription": ANY,
                "ActionsEnabled": True,
                "AlarmActions": [STEP_ARN],
                "MetricName": "NoCapacityInvocationFailures",
                "Namespace": "AWS/SageMaker",
                "Statistic": "Maximum",
                "Dimensions": [{"Name": "InferenceComponentName", "Value": IC0}],
                "Period": 30,
                "EvaluationPeriods": 1,
                "Threshold": 1,
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "TreatMissingData": "missing",
                "Tags": ANY,
            },
        )
        # When PlaceInferenceComponents finds the component serving
        status = place_inference_components(
            poll, sagemaker=sagemaker, autoscaling=autoscaling, cloudwatch=cloudwatch
        )
    # Then scaling is registered on that same poll and the hosting is ready
    assert status.status == "InService"


def test_the_scale_to_zero_client_clients_are_real_clients() -> None:
    # The stubs above stand for these exact services; botocore knows the component dimension.
    model = client("application-autoscaling").meta.service_model
    assert DIMENSION in model.shape_for("ScalableDimension").enum
    assert TRACKED_METRIC in model.shape_for("MetricType").enum
