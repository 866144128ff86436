"""Clear denials: an AccessDenied names the action, the resource, the kind of policy and the fix (F38)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, translate
from workflows.contracts import ErrorInfo
from workflows.diagnosis import Evidence, diagnose
from workflows.errors import AwsAccessDenied, DeployRejected

ROLE = "arn:aws:sts::123456789012:assumed-role/db-DeployEndpointRole/fn"
CONFIG_ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/db-run-1-a1"


def client_error(code: str, message: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "CreateEndpointConfig")


def test_a_service_control_policy_denial_names_the_action_and_the_spec_field_that_meets_it() -> None:
    # Given the organization's SCP denying CreateEndpointConfig (it requires a KmsKeyId)
    error = client_error(
        "AccessDeniedException",
        f"User: {ROLE} is not authorized to perform: sagemaker:CreateEndpointConfig on resource: {CONFIG_ARN} "
        "with an explicit deny in a service control policy",
    )
    # When it is translated
    denied = translate(error, "create endpoint config db-run-1-a1")
    # Then it is a terminal AwsAccessDenied naming the action, the resource and the policy kind
    assert isinstance(denied, AwsAccessDenied) and not denied.retryable
    assert "sagemaker:CreateEndpointConfig" in denied.message and CONFIG_ARN in denied.message
    assert "service control policy" in denied.message
    # And its fix names the spec field that supplies the condition
    assert denied.fix is not None and "hosting.kms_key_id" in denied.fix


@pytest.mark.parametrize(
    ("tail", "fix"),
    [
        ("because no identity-based policy allows the sagemaker:CreateEndpointConfig action", "grant"),
        ("with an explicit deny in an identity-based policy", "narrow that statement"),
        (
            "because no permissions boundary allows the sagemaker:CreateEndpointConfig action",
            "permissions boundary",
        ),
    ],
)
def test_each_kind_of_denial_gets_its_own_fix(tail: str, fix: str) -> None:
    # Given a denial by another kind of policy
    error = client_error(
        "AccessDeniedException",
        f"User: {ROLE} is not authorized to perform: sagemaker:CreateEndpointConfig on resource: {CONFIG_ARN} {tail}",
    )
    # When it is translated, Then the fix says what to change
    denied = translate(error, "create endpoint config db-run-1-a1")
    assert isinstance(denied, AwsAccessDenied)
    assert denied.fix is not None and fix in denied.fix


def test_an_unparsed_denial_is_still_a_denial_and_other_errors_are_not() -> None:
    # Given S3's terse AccessDenied and a validation error
    # When translated, Then the first is a denial quoting AWS, the second stays a rejection
    terse = translate(client_error("AccessDenied", "Access Denied"), "write s3://b/k")
    assert isinstance(terse, AwsAccessDenied) and "Access Denied" in terse.message
    assert isinstance(translate(client_error("ValidationException", "bad"), "x"), DeployRejected)
    with pytest.raises(AwsAccessDenied, match="write s3://b/k"), aws_errors("write s3://b/k"):
        raise client_error("AccessDenied", "Access Denied")


def test_the_diagnosis_names_the_denial_f38() -> None:
    # Given the text of a denied create
    text = (
        f"AwsAccessDenied: create model m: AccessDeniedException: sagemaker:CreateModel on {CONFIG_ARN} was "
        "denied (service control policy)."
    )
    evidence = Evidence()
    evidence.add_error(
        ErrorInfo(
            Error="AwsAccessDenied", Cause=f'{{"errorType": "AwsAccessDenied", "errorMessage": "{text}"}}'
        )
    )
    # When diagnosed
    diagnosis = diagnose(evidence)
    # Then it is F38, naming the action, and the run fails (teardown follows on every failure path)
    assert (diagnosis.id, diagnosis.action) == ("F38", "fail")
    assert "sagemaker:CreateModel" in diagnosis.title
