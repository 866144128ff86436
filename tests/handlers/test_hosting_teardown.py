"""Teardown of the modes' extra resources: scaling targets and policies, alarms, components, staging.

SageMaker's components and Application Auto Scaling are stubbed (moto has neither for components);
CloudWatch alarms and S3 are moto's.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.aws import Aws
from tests.support.hosting import BUCKET, NOW, SETTINGS, spec_with, stubbed
from workflows.contracts import DeployResult, ErrorInfo, PipelineState
from workflows.errors import ResourceBusy
from workflows.hosting.scale_to_zero import DIMENSION
from workflows.naming import TAG_KEEP, staging_prefix
from workflows.steps.teardown_endpoint import teardown

PREFIX = "db-run-1-"
IC = "db-run-1-a1-ic0"
TARGET = {"ServiceNamespace": "sagemaker", "ScalableDimension": DIMENSION}
ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-1-a1"


@pytest.fixture
def seeded(aws: Aws) -> tuple[Any, Any]:
    """Two runs' no-capacity alarms and the run's Triton folder in staging/."""
    s3, cloudwatch = aws.s3, aws.cloudwatch
    for name in (f"{IC}-no-capacity", "db-other-a1-ic0-no-capacity"):
        cloudwatch.put_metric_alarm(
            AlarmName=name, MetricName="NoCapacityInvocationFailures", Namespace="AWS/SageMaker",
            Statistic="Maximum", Period=30, EvaluationPeriods=1, Threshold=1,
            ComparisonOperator="GreaterThanOrEqualToThreshold",
        )  # fmt: skip
    s3.put_object(Bucket=BUCKET, Key=staging_prefix("run-1") + "a1/triton/model/config.pbtxt", Body=b"x")
    return s3, cloudwatch


def state(*, keep: bool = False, failed: bool = False) -> PipelineState:
    spec = spec_with("bundled", {"mode": "scale-to-zero", "instance_type_fallbacks": ["ml.g6.12xlarge"], "accelerator_devices": 1},
                     keep_endpoint=keep)  # fmt: skip
    deploy = DeployResult(
        endpoint_name="db-run-1-a1", endpoint_config_name="db-run-1-a1", model_names=["db-run-1-a1-m0"],
        instance_type="ml.g6.12xlarge", created_at=NOW, mode="scale-to-zero", inference_components=[IC],
    )  # fmt: skip
    error = ErrorInfo(Error="WarmupFailed", Cause="x") if failed else None
    return PipelineState(run_id="run-1", spec=spec, deploy=deploy, error=error)


def expect_keep_tags(sm: Any) -> list[str]:
    """Stub the Describe call and AddTags(deploybench:keep=true) teardown makes for each kept resource."""
    arn = "arn:aws:sagemaker:us-east-1:123456789012:{}/{}".format
    endpoint, config, model = (
        arn("endpoint", "db-run-1-a1"),
        arn("endpoint-config", "db-run-1-a1"),
        arn("model", "db-run-1-a1-m0"),
    )
    component = arn("inference-component", IC)
    times = {"CreationTime": NOW, "LastModifiedTime": NOW}
    calls = [
        (endpoint, "describe_endpoint", {"EndpointName": "db-run-1-a1"},
         {"EndpointName": "db-run-1-a1", "EndpointArn": endpoint, "EndpointStatus": "InService", **times}),
        (config, "describe_endpoint_config", {"EndpointConfigName": "db-run-1-a1"},
         {"EndpointConfigName": "db-run-1-a1", "EndpointConfigArn": config, "ProductionVariants": [{"VariantName": "primary"}], "CreationTime": NOW}),
        (model, "describe_model", {"ModelName": "db-run-1-a1-m0"},
         {"ModelName": "db-run-1-a1-m0", "ModelArn": model, "CreationTime": NOW}),
        (component, "describe_inference_component", {"InferenceComponentName": IC},
         {"InferenceComponentName": IC, "InferenceComponentArn": component, "EndpointName": "db-run-1-a1",
          "EndpointArn": endpoint, **times}),
    ]  # fmt: skip
    for resource, describe, params, answer in calls:
        sm.add_response(describe, answer, params)
        sm.add_response(
            "add_tags", {"Tags": []}, {"ResourceArn": resource, "Tags": [{"Key": TAG_KEEP, "Value": "true"}]}
        )
    return [endpoint, config, model, component]


def listing(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {kind: items}


def ic(status: str = "InService") -> dict[str, Any]:
    return {
        "InferenceComponentName": IC, "InferenceComponentArn": ARN, "EndpointName": "db-run-1-a1", "EndpointArn": ARN,
        "VariantName": "primary", "InferenceComponentStatus": status, "CreationTime": NOW, "LastModifiedTime": NOW,
    }  # fmt: skip


def run_resources(sm: Any, *, components: list[dict[str, Any]]) -> None:
    sm.add_response(
        "list_inference_components", listing("InferenceComponents", components), {"NameContains": PREFIX}
    )


def endpoints_configs_models(sm: Any, *, present: bool) -> None:
    sm.add_response(
        "list_endpoints",
        listing("Endpoints", [{"EndpointName": "db-run-1-a1", "EndpointArn": ARN, "CreationTime": NOW,
                               "LastModifiedTime": NOW, "EndpointStatus": "InService"}] if present else []),
        {"NameContains": PREFIX},
    )  # fmt: skip


def test_scale_to_zero_teardown_deletes_in_dependency_order_and_verifies(seeded: tuple[Any, Any]) -> None:
    s3, cloudwatch = seeded
    resource = f"inference-component/{IC}"
    other = "inference-component/db-other-a1-ic0"
    with stubbed("sagemaker") as (sagemaker, sm), stubbed("application-autoscaling") as (autoscaling, aas):
        # Given the run's scalable target with two policies (and another run's target)
        targets = {"ScalableTargets": [
            {**TARGET, "ResourceId": r, "MinCapacity": 0, "MaxCapacity": 1, "RoleARN": "arn:aws:iam::1:role/x",
             "CreationTime": NOW} for r in (resource, other)
        ]}  # fmt: skip
        aas.add_response("describe_scalable_targets", targets, TARGET)
        policies = {"ScalingPolicies": [
            {"PolicyARN": "arn:p", "PolicyName": n, **TARGET, "ResourceId": resource, "PolicyType": t, "CreationTime": NOW}
            for n, t in ((f"{IC}-scale-out-from-zero", "StepScaling"), (f"{IC}-target-tracking", "TargetTrackingScaling"))
        ]}  # fmt: skip
        aas.add_response("describe_scaling_policies", policies, {**TARGET, "ResourceId": resource})
        for name in (f"{IC}-scale-out-from-zero", f"{IC}-target-tracking"):
            aas.add_response(
                "delete_scaling_policy", {}, {**TARGET, "ResourceId": resource, "PolicyName": name}
            )
        aas.add_response("deregister_scalable_target", {}, {**TARGET, "ResourceId": resource})
        # And its component, endpoint, config and model
        run_resources(sm, components=[ic()])
        sm.add_response("delete_inference_component", {}, {"InferenceComponentName": IC})
        run_resources(sm, components=[])
        endpoints_configs_models(sm, present=True)
        sm.add_response("delete_endpoint", {}, {"EndpointName": "db-run-1-a1"})
        sm.add_response("list_endpoint_configs", listing("EndpointConfigs", [
            {"EndpointConfigName": "db-run-1-a1", "EndpointConfigArn": ARN, "CreationTime": NOW}]), {"NameContains": PREFIX})  # fmt: skip
        sm.add_response("delete_endpoint_config", {}, {"EndpointConfigName": "db-run-1-a1"})
        sm.add_response("list_models", listing("Models", [
            {"ModelName": "db-run-1-a1-m0", "ModelArn": ARN, "CreationTime": NOW}]), {"NameContains": PREFIX})  # fmt: skip
        sm.add_response("delete_model", {}, {"ModelName": "db-run-1-a1-m0"})
        # And the verification finds only the other run's target
        aas.add_response(
            "describe_scalable_targets", {"ScalableTargets": targets["ScalableTargets"][1:]}, TARGET
        )
        run_resources(sm, components=[])
        endpoints_configs_models(sm, present=False)
        sm.add_response("list_endpoint_configs", listing("EndpointConfigs", []), {"NameContains": PREFIX})
        sm.add_response("list_models", listing("Models", []), {"NameContains": PREFIX})
        # When the run is torn down
        result = teardown(state(), sagemaker=sagemaker, s3=s3, settings=SETTINGS, autoscaling=autoscaling,
                          cloudwatch=cloudwatch)  # fmt: skip
    # Then everything of the run went, in dependency order, and nothing of the other run
    assert result.deleted[:5] == [
        f"scaling-policy/{IC}-scale-out-from-zero",
        f"scaling-policy/{IC}-target-tracking",
        f"scalable-target/{resource}",
        f"alarm/{IC}-no-capacity",
        f"inference-component/{IC}",
    ]
    assert "endpoint/db-run-1-a1" in result.deleted and f"s3://{BUCKET}/staging/run-1/" in result.deleted
    alarms = [a["AlarmName"] for a in cloudwatch.describe_alarms()["MetricAlarms"]]
    assert alarms == ["db-other-a1-ic0-no-capacity"]
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="staging/run-1/")["KeyCount"] == 0


def test_an_endpoint_waits_for_its_components_to_go(seeded: tuple[Any, Any]) -> None:
    s3, cloudwatch = seeded
    with stubbed("sagemaker") as (sagemaker, sm), stubbed("application-autoscaling") as (autoscaling, aas):
        aas.add_response("describe_scalable_targets", {"ScalableTargets": []}, TARGET)
        # Given a component still Creating: its delete is refused as in progress
        run_resources(sm, components=[ic("Creating")])
        sm.add_client_error(
            "delete_inference_component", service_error_code="ValidationException",
            service_message=f'Cannot delete in-progress inference component "{ARN}".',
            expected_params={"InferenceComponentName": IC},
        )  # fmt: skip
        run_resources(sm, components=[ic("Creating")])
        endpoints_configs_models(sm, present=True)
        sm.add_response("list_endpoint_configs", listing("EndpointConfigs", []), {"NameContains": PREFIX})
        sm.add_response("list_models", listing("Models", []), {"NameContains": PREFIX})
        # When teardown runs, the endpoint is not deleted under its component: the step retries
        with pytest.raises(ResourceBusy, match="inference components are still being deleted"):
            teardown(state(), sagemaker=sagemaker, s3=s3, settings=SETTINGS, autoscaling=autoscaling,
                     cloudwatch=cloudwatch)  # fmt: skip


def test_a_kept_endpoint_keeps_its_components_scaling_and_alarm(seeded: tuple[Any, Any]) -> None:
    s3, cloudwatch = seeded
    resource = f"inference-component/{IC}"
    with stubbed("sagemaker") as (sagemaker, sm), stubbed("application-autoscaling") as (autoscaling, aas):
        target = {**TARGET, "ResourceId": resource, "MinCapacity": 0, "MaxCapacity": 1, "RoleARN": "arn:aws:iam::1:role/x",
                  "CreationTime": NOW}  # fmt: skip
        aas.add_response("describe_scalable_targets", {"ScalableTargets": [target]}, TARGET)
        run_resources(sm, components=[ic()])
        run_resources(sm, components=[ic()])
        endpoints_configs_models(sm, present=True)
        sm.add_response("list_endpoint_configs", listing("EndpointConfigs", []), {"NameContains": PREFIX})
        sm.add_response("list_models", listing("Models", []), {"NameContains": PREFIX})
        aas.add_response("describe_scalable_targets", {"ScalableTargets": [target]}, TARGET)
        run_resources(sm, components=[ic()])
        endpoints_configs_models(sm, present=True)
        sm.add_response("list_endpoint_configs", listing("EndpointConfigs", []), {"NameContains": PREFIX})
        sm.add_response("list_models", listing("Models", []), {"NameContains": PREFIX})
        kept_arns = expect_keep_tags(sm)
        # Given a successful run that asked to keep its endpoint
        result = teardown(state(keep=True), sagemaker=sagemaker, s3=s3, settings=SETTINGS,
                          autoscaling=autoscaling, cloudwatch=cloudwatch)  # fmt: skip
    # Then the component, its scaling and its alarm stay; only the staging folder went
    assert IC in result.kept
    assert f"{IC}-no-capacity" in [a["AlarmName"] for a in cloudwatch.describe_alarms()["MetricAlarms"]]
    assert result.deleted == [f"s3://{BUCKET}/staging/run-1/"]
    # And everything kept was tagged for the leak janitor to leave alone (the stub checked each call)
    assert len(kept_arns) == 4
