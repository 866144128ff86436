"""KMS: every object written names the stack's key (recorded by moto), the bucket encrypts with it
(SSE-KMS, bucket keys), and each role may use the key exactly as far as it needs (IAM contract)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from infra.functions import KEYED_CREATORS
from state_machines import FUNCTIONS
from tests.support.aws import Aws
from tests.support.iam import Binding, allowed, function_role, principal, sagemaker_role_id
from tests.support.iam_actions import Access
from tests.support.infra import synthesize
from workflows.aws.encryption import encrypt_writes
from workflows.aws.storage import TRANSFER, put_text, upload_file
from workflows.settings import KMS_KEY_ENV

REGION = "us-east-1"
BUCKET = "bench-bucket"


@pytest.fixture
def keyed(aws: Aws) -> tuple[Any, str]:
    """The account's S3 client and a KMS key standing for the stack's."""
    return aws.s3, aws.client("kms").create_key()["KeyMetadata"]["Arn"]


def test_every_write_path_names_the_key(keyed: tuple[Any, str], tmp_path: Path) -> None:
    # Given the handlers' S3 client with the stack's key
    s3, key = keyed
    encrypt_writes(s3, key)
    sent: dict[str, dict[str, Any]] = {}
    s3.meta.events.register(
        "before-parameter-build.s3.CreateMultipartUpload",
        lambda params, **_: sent.update(multipart=dict(params)),
    )
    big = tmp_path / "model.tar.gz"
    big.write_bytes(b"\0" * (TRANSFER.multipart_threshold + 1))
    # When text, a multipart upload and a copy are written
    put_text(s3, f"s3://{BUCKET}/results/r/result.json", "{}", "application/json")
    upload_file(s3, big, f"s3://{BUCKET}/artifacts/r/model.tar.gz")
    s3.copy_object(
        Bucket=BUCKET,
        Key="sources/r/copy.json",
        CopySource={"Bucket": BUCKET, "Key": "results/r/result.json"},
    )
    # Then moto recorded each object as SSE-KMS under that key
    for name in ("results/r/result.json", "artifacts/r/model.tar.gz", "sources/r/copy.json"):
        head = s3.head_object(Bucket=BUCKET, Key=name)
        assert (head["ServerSideEncryption"], head["SSEKMSKeyId"]) == ("aws:kms", key), name
    # And the bucket key is asked for (moto records it for PutObject only, so the multipart request is read)
    assert s3.head_object(Bucket=BUCKET, Key="results/r/result.json")["BucketKeyEnabled"] is True
    assert sent["multipart"]["BucketKeyEnabled"] is True


def test_without_a_key_writes_are_left_to_the_bucket_default(keyed: tuple[Any, str]) -> None:
    # Given a client without a key (a stack deployed before encryption, or the CLI)
    s3, _ = keyed
    encrypt_writes(s3, None)
    # When an object is written, Then it names no key
    put_text(s3, f"s3://{BUCKET}/results/r/plain.json", "{}", "application/json")
    assert "SSEKMSKeyId" not in s3.head_object(Bucket=BUCKET, Key="results/r/plain.json")


def test_the_bucket_encrypts_with_the_stack_key_and_the_functions_know_it() -> None:
    # Given the synthesized stack
    synth = synthesize()
    [key_id] = [
        k for k, v in synth.of_type("AWS::KMS::Key").items() if "artifacts" in v["Properties"]["Description"]
    ]
    # Then the key rotates and outlives the stack, as the bucket does
    assert synth.props(key_id)["EnableKeyRotation"] is True
    assert synth.resources[key_id]["DeletionPolicy"] == "Retain"
    # And the artifact bucket encrypts with it, bucket keys on
    [rule] = [
        props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
        for props in (synth.props(b) for b in synth.of_type("AWS::S3::Bucket"))
        if props.get("VersioningConfiguration")
    ]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert rule["BucketKeyEnabled"] is True
    # And every function is told the key to name on its writes
    for function in synth.of_type("AWS::Lambda::Function").values():
        assert function["Properties"]["Environment"]["Variables"][KMS_KEY_ENV] == {
            "Fn::GetAtt": [key_id, "Arn"]
        }


def key_arn() -> str:
    return f"arn:aws:kms:{REGION}:123456789012:key/{next(k for k, v in synthesize().of_type('AWS::KMS::Key').items() if 'artifacts' in v['Properties']['Description']).lower()}"


BINDING = Binding("123456789012", REGION, ())


@pytest.mark.parametrize(
    ("placeholder", "writes", "creates_grants"),
    [
        ("DeployEndpointFunctionArn", True, True),
        ("StartBenchmarkJobFunctionArn", True, True),
        ("CompareWithBaselineFunctionArn", True, False),
        ("JanitorFunctionArn", True, False),
        ("PlanSweepFunctionArn", False, False),
        ("CheckRedeployQueueFunctionArn", False, False),
    ],
)
def test_each_function_may_use_the_key_only_as_far_as_it_needs(
    placeholder: str, writes: bool, creates_grants: bool
) -> None:
    # Given a function's role as deployed
    synth = synthesize()
    node = principal(function_role(synth, placeholder), BINDING)
    key = key_arn()
    # Then it may encrypt and decrypt objects only if it reads or writes them
    assert allowed(node, Access("kms:GenerateDataKey", key)) is writes
    assert allowed(node, Access("kms:Decrypt", key)) is writes
    # And it may let SageMaker create a grant for a resource only if it creates keyed resources, never for itself
    assert (
        allowed(node, Access("kms:CreateGrant", key, {"kms:GrantIsForAWSResource": "true"})) is creates_grants
    )
    assert not allowed(node, Access("kms:CreateGrant", key, {"kms:GrantIsForAWSResource": "false"}))
    # And no other key
    assert not allowed(node, Access("kms:Decrypt", f"arn:aws:kms:{REGION}:123456789012:key/other"))


# The AWS calls that name the key (KmsKeyId, VolumeKmsKeyId) and the modules that make them on AWS.
KEYED_CALLS = re.compile(r"\.create_(endpoint_config|processing_job)\(")


def test_only_the_steps_that_send_the_key_may_let_sagemaker_grant_on_it() -> None:
    # Given every place outside the local SageMaker that makes a keyed create call
    sources = [
        p
        for p in [*Path("workflows").rglob("*.py"), *Path("lambdas").rglob("*.py")]
        if "local" not in p.parts
    ]
    callers = sorted(str(p) for p in sources if KEYED_CALLS.search(p.read_text(encoding="utf-8")))
    # Then they are the hosting modes' endpoint creation (reached only from DeployEndpoint) and the
    # benchmark job's start: adding another call site means adding its step to KEYED_CREATORS
    assert callers == ["workflows/hosting/create_calls.py", "workflows/steps/start_benchmark_job.py"]
    deployers = sorted(str(p) for p in sources if ".deploy(request" in p.read_text(encoding="utf-8"))
    assert deployers == ["workflows/steps/deploy_endpoint.py"]
    # And of every function's role as deployed, exactly those steps' may let SageMaker create grants
    synth = synthesize()
    key = key_arn()
    granting = {
        row.state
        for row in FUNCTIONS
        if allowed(
            principal(function_role(synth, row.placeholder), BINDING),
            Access("kms:CreateGrant", key, {"kms:GrantIsForAWSResource": "true"}),
        )
    }
    assert granting == set(KEYED_CREATORS) == {"DeployEndpoint", "StartBenchmarkJob"}


def test_the_sagemaker_role_reads_and_writes_with_the_key_and_grants_for_its_volumes() -> None:
    synth = synthesize()
    node = principal(sagemaker_role_id(synth), BINDING)
    key = key_arn()
    assert allowed(node, Access("kms:Decrypt", key)) and allowed(node, Access("kms:GenerateDataKey", key))
    assert allowed(node, Access("kms:CreateGrant", key, {"kms:GrantIsForAWSResource": "true"}))
    assert not allowed(node, Access("kms:ScheduleKeyDeletion", key))


def test_an_existing_key_is_used_instead_of_a_new_one(tmp_path: Path) -> None:
    # Given the kmsKeyArn context
    from infra.app import build_app
    from infra.constants import CONTEXT_KMS_KEY_ARN, STACK_NAME

    existing = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    app, _ = build_app(outdir=str(tmp_path), context={CONTEXT_KMS_KEY_ARN: existing})
    # When synthesized
    app.synth()
    template = json.loads((tmp_path / f"{STACK_NAME}.template.json").read_text())
    resources = template["Resources"].values()
    # Then no artifact key is created, and the bucket and the functions use the given one
    assert not [
        r for r in resources if r["Type"] == "AWS::KMS::Key" and "artifacts" in r["Properties"]["Description"]
    ]
    encryption = [
        r["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
        for r in resources
        if r["Type"] == "AWS::S3::Bucket" and r["Properties"].get("VersioningConfiguration")
    ]
    assert encryption[0]["ServerSideEncryptionByDefault"]["KMSMasterKeyID"] == existing
    assert existing in json.dumps([r for r in resources if r["Type"] == "AWS::IAM::Policy"])
