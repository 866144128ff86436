"""``deploybench doctor --aws`` on moto: roles (IAM) and images (ECR). moto cannot exercise the rest:
SimulatePrincipalPolicy and SageMaker's service quotas are not implemented (the doctor reports them
unverified there; their parsing is tested through botocore's Stubber, which checks each request and
answer against the service model), and its CloudFormation needs packages the pinned extras do not
install (the stack's description comes through the Stubber too)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.support.aws import Aws
from workflows.cli.doctor import (
    FAIL,
    OK,
    UNVERIFIED,
    check_permissions,
    check_quotas,
    doctor,
    key_permissions,
)
from workflows.images.table import HF_INFERENCE, image_uri
from workflows.naming import OUTPUT_BUCKET

REGION = "us-east-1"


def trust(service: str) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
    }


BUCKET = "deploybench-artifacts"


def roles(session: Any, services: list[str]) -> list[str]:
    iam = session.client("iam")
    return [
        iam.create_role(RoleName=f"Deploybench-{i}", AssumeRolePolicyDocument=json.dumps(trust(s)))["Role"][
            "RoleName"
        ]
        for i, s in enumerate(services)
    ]


def stack(session: Any, role_names: list[str]) -> tuple[Any, Stubber]:
    """A CloudFormation client answering for the stack: its bucket output and its roles."""
    cloudformation = session.client("cloudformation")
    stub = Stubber(cloudformation)
    now = "2026-12-01T00:00:00Z"
    stub.add_response(
        "describe_stacks",
        {"Stacks": [{"StackName": "Deploybench", "CreationTime": now, "StackStatus": "CREATE_COMPLETE",
                     "Outputs": [{"OutputKey": OUTPUT_BUCKET, "OutputValue": BUCKET}]}]},
        {"StackName": "Deploybench"},
    )  # fmt: skip
    resources = [
        {"LogicalResourceId": f"Role{i}", "PhysicalResourceId": name, "ResourceType": "AWS::IAM::Role",
         "Timestamp": now, "ResourceStatus": "CREATE_COMPLETE"}
        for i, name in enumerate(role_names)
    ]  # fmt: skip
    stub.add_response("describe_stack_resources", {"StackResources": resources}, {"StackName": "Deploybench"})
    stub.activate()
    return cloudformation, stub


@pytest.fixture
def session(aws: Aws) -> Any:
    return boto3.Session(region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")


def test_doctor_on_moto_checks_roles_and_images_and_says_what_it_could_not_check(session: Any) -> None:
    # Given the stack's two roles, and in the registry only the default HF CPU image
    cloudformation, stub = stack(session, roles(session, ["sagemaker.amazonaws.com", "lambda.amazonaws.com"]))
    hf_cpu = image_uri(HF_INFERENCE, gpu=False, region=REGION)
    registry, repository, tag = (
        hf_cpu.split(".")[0],
        hf_cpu.split("/")[1].split(":")[0],
        hf_cpu.rsplit(":", 1)[1],
    )
    ecr = session.client("ecr")
    ecr.create_repository(registryId=registry, repositoryName=repository)
    ecr.put_image(
        registryId=registry,
        repositoryName=repository,
        imageManifest=json.dumps(
            {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json"}
        ),
        imageTag=tag,
    )
    # When the doctor runs
    checks = doctor(
        session, stack_name="Deploybench", instance_types=["ml.g5.xlarge"], cloudformation=cloudformation
    )
    stub.assert_no_pending_responses()
    found = {(c.area, c.subject): c for c in checks}
    # Then both roles pass, the published image is ok and a missing one fails with the fix
    assert found[("roles", "SageMaker execution role")].status == OK
    assert found[("roles", "function roles")].status == OK
    assert found[("images", hf_cpu)].status == OK
    vllm = next(c for (area, subject), c in found.items() if area == "images" and "/vllm:" in subject)
    assert vllm.status == FAIL and "hosting.image_version" in vllm.detail
    # And what moto cannot answer is reported unverified, never passed
    assert {c.status for c in found.values() if c.area in ("permissions", "quotas")} == {UNVERIFIED}
    assert any(c.area == "permissions" and "ecr:BatchGetImage" in c.subject for c in found.values())


def test_doctor_fails_without_a_role_that_sagemaker_may_assume(session: Any) -> None:
    cloudformation, _ = stack(session, roles(session, ["lambda.amazonaws.com"]))
    found = doctor(session, stack_name="Deploybench", instance_types=[], cloudformation=cloudformation)
    [role] = [c for c in found if c.subject == "SageMaker execution role"]
    assert role.status == FAIL and "cdk deploy" in role.detail
    assert not [c for c in found if c.area == "permissions"]


def test_simulated_decisions_become_ok_or_fail_naming_the_action_and_resource() -> None:
    # Given IAM's simulation answering allowed for the image pull and implicitDeny for the S3 listing
    iam = boto3.client("iam", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    role = {"RoleName": "db-role", "Arn": "arn:aws:iam::123456789012:role/db-role"}
    wanted = key_permissions(
        bucket="b", images=[image_uri(HF_INFERENCE, gpu=False, region=REGION)], partition="aws"
    )
    with Stubber(iam) as stub:
        for action, _, _ in wanted:
            decision = "implicitDeny" if action == "s3:ListBucket" else "allowed"
            stub.add_response(
                "simulate_principal_policy",
                {"EvaluationResults": [{"EvalActionName": action, "EvalDecision": decision}]},
            )
        found = check_permissions(iam, role, wanted, region=REGION)
    by_action = {c.subject.split(" ")[0]: c for c in found}
    assert by_action["ecr:BatchGetImage"].status == OK
    assert by_action["s3:ListBucket"].status == FAIL and "implicitDeny" in by_action["s3:ListBucket"].detail
    assert (
        "arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/db-doctor:*"
        in by_action["logs:PutLogEvents"].subject
    )


def test_a_zero_endpoint_quota_fails_and_an_unlisted_one_is_unverified() -> None:
    quotas = boto3.client(
        "service-quotas", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x"
    )
    listed = [
        {"QuotaName": "ml.g5.xlarge for endpoint usage", "Value": 0.0},
        {"QuotaName": "ml.c6i.xlarge for endpoint usage", "Value": 4.0},
    ]
    with Stubber(quotas) as stub:
        stub.add_response("list_service_quotas", {"Quotas": listed}, {"ServiceCode": "sagemaker"})
        found = {
            c.subject: c for c in check_quotas(quotas, ["ml.g5.xlarge", "ml.c6i.xlarge", "ml.p5.48xlarge"])
        }
    assert found["ml.g5.xlarge"].status == FAIL and "request an increase" in found["ml.g5.xlarge"].detail
    assert found["ml.c6i.xlarge"].status == OK
    assert found["ml.p5.48xlarge"].status == UNVERIFIED


def test_a_zero_quota_on_every_pooled_type_is_named_as_a_quota_limit_not_capacity() -> None:
    quotas = boto3.client(
        "service-quotas", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x"
    )
    # Given two pooled types, both at zero endpoint quota
    listed = [
        {"QuotaName": "ml.g6.xlarge for endpoint usage", "Value": 0.0},
        {"QuotaName": "ml.g5.xlarge for endpoint usage", "Value": 0.0},
    ]
    with Stubber(quotas) as stub:
        stub.add_response("list_service_quotas", {"Quotas": listed}, {"ServiceCode": "sagemaker"})
        found = check_quotas(quotas, ["ml.g6.xlarge", "ml.g5.xlarge"])
    # Then the doctor says pools cannot help: it is the quota, not capacity
    [pools] = [c for c in found if c.subject == "instance pools"]
    assert pools.status == FAIL and "a quota limit, not a capacity stall" in pools.detail
