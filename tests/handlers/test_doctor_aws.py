"""``deploybench doctor --aws`` on moto: roles (IAM) and images (ECR). moto cannot exercise the rest:
SimulatePrincipalPolicy and SageMaker's service quotas are not implemented (the doctor reports them
unverified there; their parsing is tested through botocore's Stubber, which checks each request and
answer against the service model), and its CloudFormation needs packages the pinned extras do not
install (the stack's description comes through the Stubber too)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.support.aws import Aws
from tests.support.quotas import quota_code, stubbed_quotas
from workflows.cli import main
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


def test_a_zero_endpoint_quota_fails_naming_the_increase_command_and_an_unlisted_one_is_unverified() -> None:
    # Given an account whose listing has ml.g5.xlarge at 0, ml.c6i.xlarge at 4 and no ml.p5.48xlarge
    quotas, stub = stubbed_quotas(
        {"ml.g5.xlarge for endpoint usage": 0, "ml.c6i.xlarge for endpoint usage": 4}, region=REGION
    )
    # When the doctor reads the quotas of three types
    found = {
        c.subject: c
        for c in check_quotas(quotas, ["ml.g5.xlarge", "ml.c6i.xlarge", "ml.p5.48xlarge"], region=REGION)
    }
    # Then the zero fails with the command that asks for one, the listed one passes, the unlisted is unverified
    stub.assert_no_pending_responses()
    code = quota_code("ml.g5.xlarge for endpoint usage")
    assert found["ml.g5.xlarge"].status == FAIL
    assert (
        f"aws service-quotas request-service-quota-increase --service-code sagemaker --quota-code {code} "
        f"--desired-value 1 --region {REGION}" in found["ml.g5.xlarge"].detail
    )
    assert found["ml.c6i.xlarge"].status == OK
    assert found["ml.p5.48xlarge"].status == UNVERIFIED


def test_a_zero_quota_on_every_pooled_type_is_named_as_a_quota_limit_not_capacity() -> None:
    quotas = boto3.client(
        "service-quotas", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x"
    )
    # Given two pooled types, both at zero endpoint quota (codes listed, values applied, as AWS answers)
    listed = [
        {"QuotaName": "ml.g6.xlarge for endpoint usage", "QuotaCode": "L-11111111", "Value": 0.0},
        {"QuotaName": "ml.g5.xlarge for endpoint usage", "QuotaCode": "L-22222222", "Value": 0.0},
    ]
    with Stubber(quotas) as stub:
        stub.add_response("list_service_quotas", {"Quotas": listed}, {"ServiceCode": "sagemaker"})
        for quota in listed:
            stub.add_response(
                "get_service_quota",
                {"Quota": quota},
                {"ServiceCode": "sagemaker", "QuotaCode": quota["QuotaCode"]},
            )
        found = check_quotas(quotas, ["ml.g6.xlarge", "ml.g5.xlarge"])
    # Then the doctor says pools cannot help: it is the quota, not capacity
    [pools] = [c for c in found if c.subject == "instance pools"]
    assert pools.status == FAIL and "a quota limit, not a capacity stall" in pools.detail


def _doctor_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        main(["doctor", "--aws", *argv])
    out = capsys.readouterr()
    return int(exited.value.code or 0), out.out + out.err


@pytest.mark.parametrize(
    ("env", "argv", "says"),
    [
        ({}, [], "NoRegion: no AWS region is set. Fix: pass --region"),
        ({"AWS_REGION": "eu-west-1"}, [], "NoCredentials: no usable AWS credentials were found."),
        ({"AWS_DEFAULT_REGION": "eu-west-1"}, [], "NoCredentials: no usable AWS credentials were found."),
        ({"AWS_REGION": "eu-west-1"}, ["--profile", "nope"], "ProfileNotFound: The config profile (nope)"),
    ],
    ids=["no-region", "no-credentials", "default-region-no-credentials", "unknown-profile"],
)
def test_doctor_without_a_usable_setup_prints_one_line_and_exits_2(
    env: dict[str, str],
    argv: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a machine with no AWS configuration but what the case sets
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # When the doctor runs
    code, text = _doctor_cli(argv, capsys)
    # Then it says what is missing in one line, with the fix, and exits 2
    assert code == 2, text
    assert text.strip().splitlines() == [text.strip()] and says in text
    assert "Traceback" not in text


def test_doctor_reads_the_region_from_aws_region_before_aws_default_region(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given credentials, AWS_DEFAULT_REGION eu-west-1 and AWS_REGION a region SageMaker has not
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_REGION", "xx-fake-1")
    # When the doctor runs without --region
    code, text = _doctor_cli([], capsys)
    # Then it took AWS_REGION's, and refused it in one line before any call
    assert code == 2, text
    assert "SpecInvalid: region 'xx-fake-1' is not a region where SageMaker is offered" in text
    assert len(text.strip().splitlines()) == 1
