"""The janitor sweeps every Region a run may have used (the stack's allowed Regions), not only its own: expired
endpoints, configs and models there (moto), the run's staged artifact copy in that Region's bucket, and a
router there (recorded responses in botocore's shapes: moto has no router API)."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest
from botocore.stub import Stubber

from tests.handlers.test_janitor import BUCKET, NOW, deploy, names, tags
from tests.support.aws import Aws
from workflows.hosting.region_staging import region_bucket
from workflows.janitor.cleanup import find_and_remove, other_regions

OTHER = "us-west-2"
TTL = timedelta(hours=1)
LATER = NOW + timedelta(hours=2)
"""The pass runs two hours on: a staged copy written now is an hour past the TTL, a live run is not."""


@pytest.fixture
def aws_bucket() -> str:
    return BUCKET


def _staged(aws: Aws, run_id: str) -> str:
    there = region_bucket(BUCKET, OTHER)
    aws.s3.create_bucket(Bucket=there, CreateBucketConfiguration={"LocationConstraint": OTHER})
    aws.s3.put_object(Bucket=there, Key=f"staging/{run_id}/{OTHER}/model.tar.gz", Body=b"artifact")
    return there


def test_expired_resources_and_staged_copies_in_another_region_are_removed(aws: Aws) -> None:
    # Given, in the second Region, a moved run's expired endpoint (with config and model) and its staged copy,
    # a live run's endpoint, and an endpoint that is not deploybench's
    away = boto3.client("sagemaker", region_name=OTHER)
    deploy(away, "db-moved-a2", tags(NOW - timedelta(hours=1)))
    deploy(away, "db-live-a2", tags(NOW + timedelta(hours=5)))
    deploy(away, "team-a1", tags(NOW - timedelta(hours=1)))
    there = _staged(aws, "moved")
    # When the janitor sweeps its own Region and the second
    report = find_and_remove(
        sagemaker=aws.sagemaker, s3=aws.s3, bucket=BUCKET, now=LATER, ttl=TTL, regions=[OTHER],
        regional=lambda region: boto3.client("sagemaker", region_name=region),
    )  # fmt: skip
    # Then the moved run's resources there are gone, named with their Region, and the rest is left
    assert names(away) == {
        "db-live-a2",
        "config:db-live-a2",
        "db-live-a2-m0",
        "team-a1",
        "config:team-a1",
        "team-a1-m0",
    }
    removed = {(leak.kind, leak.name) for leak in report.leaks if leak.action == "deleted"}
    assert {("endpoint", f"{OTHER}/db-moved-a2"), ("model", f"{OTHER}/db-moved-a2-m0")} <= removed
    # And the staged copy in that Region's bucket went with them
    assert ("staging", f"s3://{there}/staging/moved/") in removed
    assert aws.s3.list_objects_v2(Bucket=there).get("KeyCount") == 0
    # And what moto cannot list there is reported with its Region, not fatal
    assert [e.split(":")[0] for e in report.errors if e.startswith(f"{OTHER}/")] == [
        f"{OTHER}/inference-router",
        f"{OTHER}/inference-component",
    ]


def test_a_janitor_of_its_own_region_only_leaves_the_other_regions_leaks(aws: Aws) -> None:
    away = boto3.client("sagemaker", region_name=OTHER)
    deploy(away, "db-moved-a2", tags(NOW - timedelta(hours=1)))
    report = find_and_remove(sagemaker=aws.sagemaker, s3=aws.s3, bucket=BUCKET, now=LATER, ttl=TTL)
    assert "db-moved-a2" in names(away) and report.leaks == []


def test_an_expired_router_in_another_region_is_deleted_by_its_tags(aws: Aws) -> None:
    # Given the second Region's listings as SageMaker answers them: an expired run's router, nothing else
    away = boto3.client("sagemaker", region_name=OTHER, aws_access_key_id="x", aws_secret_access_key="x")
    arn = f"arn:aws:sagemaker:{OTHER}:123456789012:inference-router/db-r1-router"
    router = {"InferenceRouterName": "db-r1-router", "InferenceRouterArn": arn, "CreationTime": NOW,
              "LastModifiedTime": NOW}  # fmt: skip
    with Stubber(away) as stub:
        stub.add_response("list_inference_routers", {"InferenceRouters": [router]}, {})
        stub.add_response("list_tags", {"Tags": tags(NOW - timedelta(hours=1))}, {"ResourceArn": arn})
        stub.add_response("delete_inference_router", {}, {"InferenceRouterName": "db-r1-router"})
        for operation, key, params in (
            ("list_inference_components", "InferenceComponents", {"NameContains": "db-"}),
            ("list_endpoints", "Endpoints", {"NameContains": "db-"}),
            ("list_endpoint_configs", "EndpointConfigs", {"NameContains": "db-"}),
            ("list_models", "Models", {"NameContains": "db-"}),
            ("list_processing_jobs", "ProcessingJobSummaries", {"NameContains": "db-", "StatusEquals": "InProgress"}),
        ):  # fmt: skip
            stub.add_response(operation, {key: []}, params)
        # When the janitor sweeps that Region (whose staging bucket was never made)
        report = find_and_remove(
            sagemaker=aws.sagemaker,
            s3=aws.s3,
            bucket=BUCKET,
            now=NOW,
            regions=[OTHER],
            regional=lambda _: away,
        )
        stub.assert_no_pending_responses()
    # Then the router is deleted, named with its Region, and the missing bucket is no error of that Region
    assert [(leak.kind, leak.name, leak.action) for leak in report.leaks] == [
        ("inference-router", f"{OTHER}/db-r1-router", "deleted")
    ]
    assert [e for e in report.errors if e.startswith(f"{OTHER}/")] == []


def test_the_regions_setting_names_the_others_once_in_order() -> None:
    assert other_regions(" us-east-1, us-west-2,eu-west-1,us-west-2 ", "us-east-1") == [
        "us-west-2",
        "eu-west-1",
    ]
    assert other_regions(None, "us-east-1") == other_regions("", "us-east-1") == []


def test_the_janitor_function_sweeps_the_stacks_regions_as_its_role_allows(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lambdas.clients
    from lambdas.janitor import handler
    from tests.handlers.test_janitor import ROLE
    from workflows.janitor.cleanup import REGIONS_ENV
    from workflows.local.lambda_seam import LocalLambdaContext

    # Given the stack's Regions setting naming a second Region, where a moved run left an expired endpoint
    monkeypatch.setenv("DEPLOYBENCH_BUCKET", BUCKET)
    monkeypatch.setenv("DEPLOYBENCH_SAGEMAKER_ROLE_ARN", ROLE)
    monkeypatch.setenv(REGIONS_ENV, f"us-east-1,{OTHER}")
    away = boto3.client("sagemaker", region_name=OTHER)
    deploy(away, "db-moved-a2", tags(NOW - timedelta(hours=1)))
    context = LocalLambdaContext(
        "deploybench-janitor", "arn:aws:lambda:us-east-1:1:function:deploybench-janitor", 512, 300
    )
    # When the janitor function runs (every request it makes is checked against its role: tests/support/iam.py)
    lambdas.clients.clear()
    try:
        result = handler({"dry_run": False}, context)
    finally:
        lambdas.clients.clear()
    # Then the other Region's leak is removed
    assert "db-moved-a2" not in names(away)
    assert {leak["name"] for leak in result["leaks"]} >= {f"{OTHER}/db-moved-a2", f"{OTHER}/db-moved-a2-m0"}
