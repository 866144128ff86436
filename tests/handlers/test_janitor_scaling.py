"""The janitor and scale to zero: targets, policies and alarms go with their expired run, and a live
run outlasting any fixed TTL is never reaped.

CloudWatch, S3 and SageMaker's endpoints are moto's. Application Auto Scaling and inference
components are stubbed with botocore's Stubber (parameters checked against the service model):
moto refuses the ``sagemaker:inference-component:DesiredCopyCount`` dimension and has no components.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.conftest import fast_spec
from tests.support.aws import Aws
from workflows import naming
from workflows.hosting.scale_to_zero import DIMENSION
from workflows.janitor.cleanup import find_and_remove
from workflows.janitor.lifetime import run_lifetime

REGION = "us-east-1"
BUCKET = "janitor-bucket"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ARN = "arn:aws:sagemaker:us-east-1:123456789012:inference-component/{}"
TARGET = {"ServiceNamespace": "sagemaker", "ScalableDimension": DIMENSION}
EXPIRED, LIVE, KEPT, GONE = "db-old-a1-ic0", "db-live-a1-ic0", "db-kept-a1-ic0", "db-gone-a2-ic1"


@pytest.fixture
def aws_bucket() -> str:
    return BUCKET


def run_tags(expires: datetime, *, keep: bool = False) -> list[dict[str, str]]:
    tags = [
        {"Key": naming.TAG_MANAGED, "Value": "true"},
        {"Key": naming.TAG_EXPIRES_AT, "Value": expires.strftime("%Y-%m-%dT%H:%M:%SZ")},
    ]
    return tags + ([{"Key": naming.TAG_KEEP, "Value": "true"}] if keep else [])


def put_alarm(cloudwatch: Any, name: str, tags: list[dict[str, str]] | None = None) -> None:
    cloudwatch.put_metric_alarm(
        AlarmName=name, MetricName="NoCapacityInvocationFailures", Namespace="AWS/SageMaker",
        Statistic="Maximum", Period=30, EvaluationPeriods=1, Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold", **({"Tags": tags} if tags else {}),
    )  # fmt: skip


def alarm_names(cloudwatch: Any) -> set[str]:
    return {a["AlarmName"] for a in cloudwatch.describe_alarms()["MetricAlarms"]}


def tracking_alarms(component: str) -> list[str]:
    """The alarms Application Auto Scaling creates for a target-tracking policy on ``component``."""
    return [
        f"TargetTracking-inference-component/{component}-AlarmHigh-0a1b2c3d-1111-2222-3333-444455556666",
        f"TargetTracking-inference-component/{component}-AlarmLow-9f8e7d6c-1111-2222-3333-444455556666",
    ]


def expect_component(stub: Stubber, name: str, tags: list[dict[str, str]] | None) -> None:
    """DescribeInferenceComponent and ListTags for ``name``; ``None`` tags: the component is gone."""
    if tags is None:
        stub.add_client_error(
            "describe_inference_component",
            service_error_code="ValidationException",
            service_message=f'Could not find inference component "{ARN.format(name)}".',
            expected_params={"InferenceComponentName": name},
        )
        return
    stub.add_response(
        "describe_inference_component",
        {"InferenceComponentName": name, "InferenceComponentArn": ARN.format(name), "EndpointName": "e",
         "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/e",
         "CreationTime": NOW, "LastModifiedTime": NOW},
        {"InferenceComponentName": name},
    )  # fmt: skip
    stub.add_response("list_tags", {"Tags": tags}, {"ResourceArn": ARN.format(name)})


def expect_empty_sagemaker_listings(stub: Stubber) -> None:
    stub.add_response("list_inference_routers", {"InferenceRouters": []}, {})  # it takes no name filter
    for operation, key, extra in (
        ("list_inference_components", "InferenceComponents", {}),
        ("list_endpoints", "Endpoints", {}),
        ("list_endpoint_configs", "EndpointConfigs", {}),
        ("list_models", "Models", {}),
        ("list_processing_jobs", "ProcessingJobSummaries", {"StatusEquals": "InProgress"}),
    ):
        stub.add_response(operation, {key: []}, {"NameContains": "db-", **extra})


def stubbed_clients() -> tuple[Any, Any]:
    keys = {"region_name": REGION, "aws_access_key_id": "x", "aws_secret_access_key": "x"}
    return boto3.client("sagemaker", **keys), boto3.client("application-autoscaling", **keys)


def expect_targets(autoscaling: Stubber, components: list[str]) -> None:
    targets = [
        {**TARGET, "ResourceId": f"inference-component/{c}", "MinCapacity": 0, "MaxCapacity": 2,
         "RoleARN": "arn:aws:iam::123456789012:role/aas", "CreationTime": NOW}
        for c in components
    ]  # fmt: skip
    autoscaling.add_response("describe_scalable_targets", {"ScalableTargets": targets}, TARGET)


def expect_removal(autoscaling: Stubber, component: str) -> None:
    resource = f"inference-component/{component}"
    policies = [f"{component}-target-tracking", f"{component}-scale-out-from-zero"]
    autoscaling.add_response(
        "describe_scaling_policies",
        {"ScalingPolicies": [
            {"PolicyARN": f"arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:x:resource/{resource}:policyName/{p}",
             "PolicyName": p, "ResourceId": resource, "PolicyType": "StepScaling", "CreationTime": NOW, **TARGET}
            for p in policies
        ]},
        {"ResourceId": resource, **TARGET},
    )  # fmt: skip
    for policy in sorted(policies):
        autoscaling.add_response(
            "delete_scaling_policy", {}, {"PolicyName": policy, "ResourceId": resource, **TARGET}
        )
    autoscaling.add_response("deregister_scalable_target", {}, {"ResourceId": resource, **TARGET})


def test_expired_and_orphaned_scaling_and_alarms_go_live_and_kept_ones_stay(aws: Aws) -> None:
    cloudwatch = aws.cloudwatch
    sagemaker, autoscaling = stubbed_clients()
    # Given four scale-to-zero components: expired, live, kept, and one already deleted
    for component, expires, keep in ((EXPIRED, NOW - timedelta(hours=1), False), (LIVE, NOW + timedelta(hours=20), False),
                                     (KEPT, NOW - timedelta(days=2), True), (GONE, NOW - timedelta(days=2), False)):  # fmt: skip
        put_alarm(cloudwatch, f"{component}-no-capacity", run_tags(expires, keep=keep))
        for name in tracking_alarms(component):
            put_alarm(cloudwatch, name)
    # And alarms that are not deploybench's: an untagged "db-" alarm, another team's tracking alarm
    put_alarm(cloudwatch, "db-backup-failed")
    put_alarm(cloudwatch, "TargetTracking-inference-component/db-team-AlarmHigh-0a1b2c3d-1111-2222-3333-4444")
    with Stubber(sagemaker) as sm, Stubber(autoscaling) as aas:
        # (targets are visited in name order: gone, kept, live, old)
        expect_targets(aas, [EXPIRED, LIVE, KEPT, GONE])
        expect_component(sm, GONE, None)
        expect_removal(aas, GONE)
        expect_component(sm, KEPT, run_tags(NOW - timedelta(days=2), keep=True))
        expect_component(sm, LIVE, run_tags(NOW + timedelta(hours=20)))
        expect_component(sm, EXPIRED, run_tags(NOW - timedelta(hours=1)))
        expect_removal(aas, EXPIRED)
        expect_empty_sagemaker_listings(sm)
        # When the janitor runs
        report = find_and_remove(
            sagemaker=sagemaker,
            s3=aws.s3,
            bucket=BUCKET,
            autoscaling=autoscaling,
            cloudwatch=cloudwatch,
            now=NOW,
        )
        sm.assert_no_pending_responses()
        aas.assert_no_pending_responses()
    # Then the expired and the orphaned component's policies, targets and alarms are removed
    removed = {(leak.kind, leak.name) for leak in report.leaks if leak.action == "deleted"}
    for component in (EXPIRED, GONE):
        resource = f"inference-component/{component}"
        assert {("scaling-policy", f"{resource}/{component}-target-tracking"),
                ("scaling-policy", f"{resource}/{component}-scale-out-from-zero"),
                ("scalable-target", resource)} <= removed  # fmt: skip
    assert ("alarm", f"{EXPIRED}-no-capacity") in removed
    assert {("alarm", name) for name in tracking_alarms(EXPIRED) + tracking_alarms(GONE)} <= removed
    # And the live and kept runs' alarms, and alarms that are not deploybench's, stay
    left = alarm_names(cloudwatch)
    assert {
        f"{LIVE}-no-capacity",
        f"{KEPT}-no-capacity",
        *tracking_alarms(LIVE),
        *tracking_alarms(KEPT),
    } <= left
    assert {"db-backup-failed"} <= left and not set(tracking_alarms(EXPIRED)) & left
    assert report.errors == [] and report.remaining == 0
    # (GONE's no-capacity alarm carries its own expired tags: it goes too)
    assert f"{GONE}-no-capacity" not in left


def test_a_dry_run_lists_the_scaling_leaks_and_removes_nothing(aws: Aws) -> None:
    cloudwatch = aws.cloudwatch
    sagemaker, autoscaling = stubbed_clients()
    put_alarm(cloudwatch, f"{EXPIRED}-no-capacity", run_tags(NOW - timedelta(hours=1)))
    with Stubber(sagemaker) as sm, Stubber(autoscaling) as aas:
        expect_targets(aas, [EXPIRED])
        expect_component(sm, EXPIRED, run_tags(NOW - timedelta(hours=1)))
        aas.add_response(
            "describe_scaling_policies",
            {"ScalingPolicies": []},
            {"ResourceId": f"inference-component/{EXPIRED}", **TARGET},
        )
        expect_empty_sagemaker_listings(sm)
        report = find_and_remove(
            sagemaker=sagemaker, s3=aws.s3, bucket=BUCKET, autoscaling=autoscaling, cloudwatch=cloudwatch,
            now=NOW, dry_run=True,
        )  # fmt: skip
        aas.assert_no_pending_responses()
    assert [(leak.kind, leak.action) for leak in report.leaks] == [
        ("scalable-target", "would_delete"),
        ("alarm", "would_delete"),
    ]
    assert f"{EXPIRED}-no-capacity" in alarm_names(cloudwatch)


def deploy_endpoint(sagemaker: Any, name: str, tags: list[dict[str, str]]) -> None:
    sagemaker.create_model(ModelName=f"{name}-m0", PrimaryContainer={"Image": "img"},
                           ExecutionRoleArn="arn:aws:iam::123456789012:role/sm", Tags=tags)  # fmt: skip
    sagemaker.create_endpoint_config(
        EndpointConfigName=name,
        ProductionVariants=[{"VariantName": "primary", "ModelName": f"{name}-m0",
                             "InstanceType": "ml.c5.xlarge", "InitialInstanceCount": 1}],
        Tags=tags,
    )  # fmt: skip
    sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=name, Tags=tags)


def test_a_live_run_longer_than_six_hours_is_not_reaped_and_is_once_its_budget_is_spent(
    aws: Aws,
) -> None:
    sagemaker = aws.sagemaker
    # Given a run whose spec may legally wait 12 hours for its endpoint, created at NOW
    spec = fast_spec("bundled", wait={"timeout_min": 720})
    deploy_endpoint(sagemaker, "db-long-a1", naming.tags("long", spec, now=NOW))
    lifetime = run_lifetime(spec)
    assert lifetime > timedelta(hours=12)

    def endpoints() -> set[str]:
        return {e["EndpointName"] for e in sagemaker.list_endpoints()["Endpoints"]}

    # When the janitor runs 10 hours in (a fixed 6-hour TTL would have reaped it)
    early = find_and_remove(sagemaker=sagemaker, s3=aws.s3, bucket=BUCKET, now=NOW + timedelta(hours=10))
    # Then the live run is left alone
    assert [leak for leak in early.leaks if leak.kind != "inference-component"] == []
    assert "db-long-a1" in endpoints()
    # When it runs a minute after the run's whole budget, Then the run's resources are reaped
    late = find_and_remove(
        sagemaker=sagemaker, s3=aws.s3, bucket=BUCKET, now=NOW + lifetime + timedelta(minutes=1)
    )
    assert {(leak.kind, leak.name) for leak in late.leaks} == {
        ("endpoint", "db-long-a1"), ("endpoint-config", "db-long-a1"), ("model", "db-long-a1-m0"),
    }  # fmt: skip
    assert "db-long-a1" not in endpoints()


def test_the_expiry_tag_is_the_creation_time_plus_the_runs_lifetime() -> None:
    spec = fast_spec("bundled")
    tags = {t["Key"]: t["Value"] for t in naming.tags("r-1", spec, now=NOW)}
    expected = NOW + run_lifetime(spec)
    assert tags[naming.TAG_EXPIRES_AT] == expected.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert tags[naming.TAG_RUN_ID] == "r-1" and tags[naming.TAG_SPEC] == spec.name
