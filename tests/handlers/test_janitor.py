"""The janitor against moto's SageMaker, S3 and SNS: expired deploybench resources go, nothing else does."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.support.aws import Aws
from workflows.janitor.cleanup import find_and_remove, run_janitor
from workflows.naming import TAG_EXPIRES_AT, TAG_KEEP, TAG_MANAGED

REGION = "us-east-1"
BUCKET = "janitor-bucket"
ROLE = "arn:aws:iam::123456789012:role/sm"
NOW = datetime.now(UTC)


@pytest.fixture
def aws_bucket() -> str:
    return BUCKET


def tags(expires: datetime | None, *, managed: bool = True, keep: bool = False) -> list[dict[str, str]]:
    out = [{"Key": TAG_MANAGED, "Value": "true" if managed else "false"}]
    if expires is not None:
        out.append({"Key": TAG_EXPIRES_AT, "Value": expires.strftime("%Y-%m-%dT%H:%M:%SZ")})
    if keep:
        out.append({"Key": TAG_KEEP, "Value": "true"})
    return out


def deploy(sagemaker: Any, name: str, resource_tags: list[dict[str, str]]) -> None:
    """A run's model, endpoint config and endpoint, all named ``name`` (plus -m0 for the model)."""
    sagemaker.create_model(
        ModelName=f"{name}-m0", PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE, Tags=resource_tags
    )
    sagemaker.create_endpoint_config(
        EndpointConfigName=name,
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": f"{name}-m0",
                "InstanceType": "ml.c5.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
        Tags=resource_tags,
    )
    sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=name, Tags=resource_tags)


def names(sagemaker: Any) -> set[str]:
    return (
        {e["EndpointName"] for e in sagemaker.list_endpoints()["Endpoints"]}
        | {f"config:{c['EndpointConfigName']}" for c in sagemaker.list_endpoint_configs()["EndpointConfigs"]}
        | {m["ModelName"] for m in sagemaker.list_models()["Models"]}
    )


def test_expired_run_resources_are_deleted_and_everything_else_is_left(aws: Aws) -> None:
    sagemaker = aws.sagemaker
    # Given a leaked run (expired), a running one, a kept one, and resources that are not deploybench's
    deploy(sagemaker, "db-leaked-a1", tags(NOW - timedelta(hours=1)))
    deploy(sagemaker, "db-running-a1", tags(NOW + timedelta(hours=5)))
    deploy(sagemaker, "db-kept-a1", tags(NOW - timedelta(days=3), keep=True))
    deploy(sagemaker, "db-unmanaged-a1", tags(NOW - timedelta(days=3), managed=False))
    deploy(sagemaker, "team-prod-a1", tags(NOW - timedelta(days=3)))
    # When the janitor runs
    report = find_and_remove(sagemaker=sagemaker, s3=aws.s3, bucket=BUCKET, now=NOW)
    # Then exactly the leaked run's endpoint, config and model are deleted, endpoint first
    assert [(leak.kind, leak.name, leak.action) for leak in report.leaks] == [
        ("endpoint", "db-leaked-a1", "deleted"),
        ("endpoint-config", "db-leaked-a1", "deleted"),
        ("model", "db-leaked-a1-m0", "deleted"),
    ]
    assert not {"db-leaked-a1", "config:db-leaked-a1", "db-leaked-a1-m0"} & names(sagemaker)
    assert {"db-running-a1", "db-kept-a1", "db-unmanaged-a1", "team-prod-a1"} <= names(sagemaker)
    assert report.removed == 3 and report.remaining == 0
    # And a kind the service cannot list (moto has no inference routers nor components) is reported, not fatal
    assert [e.split(":")[0] for e in report.errors] == ["inference-router", "inference-component"]


def test_a_dry_run_only_lists(aws: Aws) -> None:
    deploy(aws.sagemaker, "db-leaked-a1", tags(NOW - timedelta(hours=1)))
    report = find_and_remove(sagemaker=aws.sagemaker, s3=aws.s3, bucket=BUCKET, now=NOW, dry_run=True)
    assert {leak.action for leak in report.leaks} == {"would_delete"}
    assert "db-leaked-a1" in names(aws.sagemaker)
    assert report.remaining == 3


def test_a_resource_without_expiry_expires_a_ttl_after_creation(aws: Aws) -> None:
    deploy(aws.sagemaker, "db-untimed-a1", tags(None))
    soon = find_and_remove(sagemaker=aws.sagemaker, s3=aws.s3, bucket=BUCKET, now=NOW + timedelta(hours=1))
    later = find_and_remove(sagemaker=aws.sagemaker, s3=aws.s3, bucket=BUCKET, now=NOW + timedelta(hours=7))
    assert soon.leaks == []
    assert {leak.name for leak in later.leaks} == {"db-untimed-a1", "db-untimed-a1-m0"}


def test_stale_staging_folders_are_removed_fresh_ones_kept(aws: Aws) -> None:
    s3 = aws.s3
    s3.put_object(Bucket=BUCKET, Key="staging/run-1/model.onnx", Body=b"x")
    s3.put_object(Bucket=BUCKET, Key="results/run-1/result.json", Body=b"{}")
    fresh = find_and_remove(sagemaker=aws.sagemaker, s3=s3, bucket=BUCKET, now=NOW)
    stale = find_and_remove(sagemaker=aws.sagemaker, s3=s3, bucket=BUCKET, now=NOW + timedelta(hours=7))
    assert [leak for leak in fresh.leaks if leak.kind == "staging"] == []
    assert [(leak.kind, leak.name) for leak in stale.leaks] == [("staging", f"s3://{BUCKET}/staging/run-1/")]
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert keys == ["results/run-1/result.json"]


def test_the_report_goes_to_s3_and_the_topic(aws: Aws) -> None:
    sns, sqs = aws.sns, aws.sqs
    topic = sns.create_topic(Name="alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    deploy(aws.sagemaker, "db-leaked-a1", tags(NOW - timedelta(hours=1)))
    # When the janitor runs with the topic
    report = run_janitor(sagemaker=aws.sagemaker, s3=aws.s3, sns=sns, bucket=BUCKET, topic_arn=topic, now=NOW)
    # Then the report is in S3
    assert report.report_uri and report.report_uri.startswith(f"s3://{BUCKET}/janitor/")
    key = report.report_uri.removeprefix(f"s3://{BUCKET}/")
    stored = json.loads(aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())
    assert len(stored["leaks"]) == 3
    # And the topic got one message naming each deleted resource
    [message] = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    body = json.loads(message["Body"])
    assert body["Subject"] == "deploybench janitor: 3 removed, 0 remaining"
    assert "deleted: endpoint db-leaked-a1" in body["Message"]


def test_a_quiet_pass_notifies_nobody(aws: Aws) -> None:
    # Given an account with nothing of deploybench's (every listing empty, inference components included)
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    listings = Stubber(sagemaker)
    for operation, key in (
        ("list_inference_routers", "InferenceRouters"),
        ("list_inference_components", "InferenceComponents"),
        ("list_endpoints", "Endpoints"),
        ("list_endpoint_configs", "EndpointConfigs"),
        ("list_models", "Models"),
        ("list_processing_jobs", "ProcessingJobSummaries"),
    ):
        listings.add_response(operation, {key: []})
    topic = aws.sns.create_topic(Name="alerts")["TopicArn"]
    silence = Stubber(aws.sns)  # any publish would fail: no call is expected
    # When the janitor runs
    with listings, silence:
        report = run_janitor(
            sagemaker=sagemaker, s3=aws.s3, sns=aws.sns, bucket=BUCKET, topic_arn=topic, now=NOW
        )
    # Then it found nothing, published nothing, and still wrote its report
    assert (report.leaks, report.errors) == ([], [])
    assert report.report_uri
    listings.assert_no_pending_responses()


def test_inference_components_are_deleted_jobs_stopped_busy_endpoints_retried_later(aws: Aws) -> None:
    # Inference routers, inference components and running processing jobs are not in moto: the exact
    # calls, stubbed (the Stubber checks each response against botocore's shapes).
    sagemaker = boto3.client(
        "sagemaker", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x"
    )
    expired = tags(NOW - timedelta(hours=1))
    arn = "arn:aws:sagemaker:us-east-1:123456789012:{}/{}"
    with Stubber(sagemaker) as stub:
        # A run across Regions' router (ListInferenceRouters takes no name filter: another's is listed too)
        router = {
            "InferenceRouterName": "db-r1-router",
            "InferenceRouterArn": arn.format("inference-router", "db-r1-router"),
            "CreationTime": NOW,
            "LastModifiedTime": NOW,
        }
        team = {
            **router,
            "InferenceRouterName": "team-router",
            "InferenceRouterArn": arn.format("inference-router", "team-router"),
        }
        stub.add_response("list_inference_routers", {"InferenceRouters": [team, router]}, {})
        stub.add_response("list_tags", {"Tags": expired}, {"ResourceArn": router["InferenceRouterArn"]})
        stub.add_response("delete_inference_router", {}, {"InferenceRouterName": "db-r1-router"})
        ic = {
            "InferenceComponentName": "db-r1-a1-ic0",
            "InferenceComponentArn": arn.format("inference-component", "db-r1-a1-ic0"),
            "EndpointArn": arn.format("endpoint", "db-r1-a1"),
            "EndpointName": "db-r1-a1",
            "VariantName": "primary",
            "CreationTime": NOW,
            "LastModifiedTime": NOW,
            "InferenceComponentStatus": "InService",
        }
        stub.add_response("list_inference_components", {"InferenceComponents": [ic]}, {"NameContains": "db-"})
        stub.add_response("list_tags", {"Tags": expired}, {"ResourceArn": ic["InferenceComponentArn"]})
        stub.add_response("delete_inference_component", {}, {"InferenceComponentName": "db-r1-a1-ic0"})
        endpoint = {
            "EndpointName": "db-r1-a1",
            "EndpointArn": arn.format("endpoint", "db-r1-a1"),
            "CreationTime": NOW,
            "LastModifiedTime": NOW,
            "EndpointStatus": "Creating",
        }
        stub.add_response("list_endpoints", {"Endpoints": [endpoint]}, {"NameContains": "db-"})
        stub.add_response("list_tags", {"Tags": expired}, {"ResourceArn": endpoint["EndpointArn"]})
        stub.add_client_error(
            "delete_endpoint",
            service_error_code="ValidationException",
            service_message="Cannot update in-progress endpoint",
            expected_params={"EndpointName": "db-r1-a1"},
        )
        stub.add_response("list_endpoint_configs", {"EndpointConfigs": []}, {"NameContains": "db-"})
        stub.add_response("list_models", {"Models": []}, {"NameContains": "db-"})
        job = {
            "ProcessingJobName": "db-r1-bench",
            "ProcessingJobArn": arn.format("processing-job", "db-r1-bench"),
            "CreationTime": NOW,
            "ProcessingJobStatus": "InProgress",
        }
        stub.add_response(
            "list_processing_jobs",
            {"ProcessingJobSummaries": [job]},
            {"NameContains": "db-", "StatusEquals": "InProgress"},
        )
        stub.add_response("list_tags", {"Tags": expired}, {"ResourceArn": job["ProcessingJobArn"]})
        stub.add_response("stop_processing_job", {}, {"ProcessingJobName": "db-r1-bench"})
        report = find_and_remove(sagemaker=sagemaker, s3=aws.s3, bucket=BUCKET, now=NOW)
        stub.assert_no_pending_responses()
    assert [(leak.kind, leak.action) for leak in report.leaks] == [
        ("inference-router", "deleted"),
        ("inference-component", "deleted"),
        ("endpoint", "busy"),
        ("processing-job", "stopped"),
    ]
    assert report.remaining == 1 and report.errors == []


def test_the_janitor_command_lists_leaks_in_a_dry_run_and_exits_non_zero(aws: Aws) -> None:
    from typer.testing import CliRunner

    from workflows.cli.app import app

    deploy(aws.sagemaker, "db-leaked-a1", tags(NOW - timedelta(hours=1)))
    result = CliRunner().invoke(app, ["janitor", "--dry-run", "--bucket", BUCKET])
    assert result.exit_code == 1, result.output
    assert "would_delete  endpoint" in result.output and "db-leaked-a1" in result.output
    assert "0 removed, 3 remaining" in result.output
    assert "db-leaked-a1" in names(aws.sagemaker)


def test_the_janitor_handler_removes_leaks_and_emits_the_leak_metric(
    aws: Aws, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import lambdas.clients
    from lambdas.janitor import handler
    from workflows.local.lambda_seam import LocalLambdaContext

    monkeypatch.setenv("DEPLOYBENCH_BUCKET", BUCKET)
    monkeypatch.setenv("DEPLOYBENCH_SAGEMAKER_ROLE_ARN", ROLE)
    # Powertools read the namespace when lambdas.observability was first imported: set it as Lambda's env would.
    from lambdas.observability import metrics

    monkeypatch.setattr(metrics, "namespace", "deploybench")
    deploy(aws.sagemaker, "db-leaked-a1", tags(NOW - timedelta(hours=1)))
    context = LocalLambdaContext(
        "deploybench-janitor", "arn:aws:lambda:us-east-1:1:function:deploybench-janitor", 512, 300
    )
    lambdas.clients.clear()
    try:
        result = handler({"dry_run": False}, context)
    finally:
        lambdas.clients.clear()
    assert len(result["leaks"]) == 3 and "db-leaked-a1" not in names(aws.sagemaker)
    # The alarm watches this metric (embedded metric format on stdout, as Lambda ships it to CloudWatch)
    metrics = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert any(m.get("LeakedResources") == [3.0] or m.get("LeakedResources") == 3.0 for m in metrics), metrics
