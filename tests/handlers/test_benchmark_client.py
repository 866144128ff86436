"""The benchmark client: signing (botocore's signer, verified as moto verifies), error kinds,
per-mode policies, retries and timeouts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.credentials import Credentials, RefreshableCredentials
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.exceptions import SignatureDoesNotMatchError
from moto.iam.access_control import IAMRequest

from workflows.benchmark.client import READ_TIMEOUT, Invoker, error_kind
from workflows.benchmark.noop_endpoint import NO_CAPACITY_MESSAGE, NoopEndpoint, Script
from workflows.benchmark.policy import NO_CAPACITY, POLICIES, ClientPolicy, policy_for

MODES = (
    "realtime",
    "serverless",
    "inference-component",
    "scale-to-zero",
    "multi-container",
    "triton",
    "lmi",
    "vllm",
)


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "token")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")


def invoker_for(url: str, policy: ClientPolicy | None = None, **kwargs: Any) -> Invoker:
    runtime = boto3.client("sagemaker-runtime", endpoint_url=url)
    return Invoker.from_client(runtime, "my-endpoint", policy=policy or policy_for("realtime"), **kwargs)


def test_a_signed_request_carries_the_sigv4_headers_for_what_is_sent() -> None:
    script = Script(keep_requests=True)
    with NoopEndpoint(script) as endpoint:
        # Given temporary credentials (a role's: key, secret and session token)
        invoker = Invoker(
            endpoint_url=endpoint.url,
            region="eu-west-1",
            credentials=Credentials("ASIAEXAMPLE", "secret", "session-token"),
            endpoint_name="my-endpoint",
            policy=policy_for("realtime"),
        )
        # When one request is sent
        assert invoker.call(b'{"inputs": ["x"]}').error is None
    # Then it went to the invocation path with one Host (the one signed), the token and the date
    headers = script.headers[0]
    assert script.paths == ["/endpoints/my-endpoint/invocations"]
    assert headers["Host"] == endpoint.url.removeprefix("http://")
    assert headers["X-Amz-Security-Token"] == "session-token"
    assert re.fullmatch(r"\d{8}T\d{6}Z", headers["X-Amz-Date"])
    # And an Authorization for the SageMaker signing name in the client's region, over those headers
    day = headers["X-Amz-Date"][:8]
    assert re.fullmatch(
        f"AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE/{day}/eu-west-1/sagemaker/aws4_request, "
        "SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}",
        headers["Authorization"],
    )


@pytest.fixture
def iam() -> Iterator[Any]:
    """moto's IAM and STS, with a policy that allows InvokeEndpoint."""
    with mock_aws():
        client = boto3.client("iam", region_name="us-east-1")
        document = {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "sagemaker:InvokeEndpoint", "Resource": "*"}],
        }
        client.create_policy(PolicyName="invoke", PolicyDocument=json.dumps(document))
        yield client


def verify_as_moto(script: Script, index: int, body: bytes | None = None) -> None:
    """What moto does with a request before serving it: recompute the signature from the request
    as received (path, signed headers, body) with the secret it issued, then check the policy."""
    request = IAMRequest(
        account_id=DEFAULT_ACCOUNT_ID,
        method="POST",
        path=script.paths[index],
        data={},
        body=script.bodies[index] if body is None else body,
        headers=script.headers[index],
        action="InvokeEndpoint",
    )
    request.check_signature()
    request.check_action_permitted(f"arn:aws:sagemaker:us-east-1:{DEFAULT_ACCOUNT_ID}:endpoint/my-endpoint")


def test_moto_accepts_the_signature_as_it_arrived_and_refuses_a_tampered_body(iam: Any) -> None:
    # Given an IAM user allowed to invoke endpoints, and a session with its access key
    iam.create_user(UserName="bench")
    iam.attach_user_policy(UserName="bench", PolicyArn=f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:policy/invoke")
    key = iam.create_access_key(UserName="bench")["AccessKey"]
    session = boto3.session.Session(
        aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"]
    )
    script = Script(keep_requests=True)
    with NoopEndpoint(script) as endpoint:
        runtime = session.client("sagemaker-runtime", endpoint_url=endpoint.url, region_name="us-east-1")
        invoker = Invoker.from_client(runtime, "my-endpoint", policy=policy_for("realtime"), session=session)
        # When a request is sent
        assert invoker.call(b'{"inputs": ["a text"], "parameters": {"batch_size": 1}}').error is None
    # Then the request, as it arrived, carries a signature moto accepts for that user
    assert key["AccessKeyId"] in script.headers[0]["Authorization"]
    verify_as_moto(script, 0)
    # And the same headers over another body do not verify
    with pytest.raises(SignatureDoesNotMatchError):
        verify_as_moto(script, 0, body=b'{"inputs": ["another text"], "parameters": {"batch_size": 1}}')


def test_refreshable_credentials_sign_each_request_with_the_current_role_session(iam: Any) -> None:
    # Given a role allowed to invoke endpoints, whose sessions expire within botocore's 10-minute
    # mandatory-refresh window (so every request refreshes them: a processing job's role, sped up)
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }
    role = iam.create_role(RoleName="job", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    iam.attach_role_policy(RoleName="job", PolicyArn=f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:policy/invoke")
    sts = boto3.client("sts", region_name="us-east-1")
    issued: list[str] = []

    def assume() -> dict[str, str]:
        found = sts.assume_role(RoleArn=role["Arn"], RoleSessionName=f"s{len(issued)}")["Credentials"]
        issued.append(found["AccessKeyId"])
        expiry = datetime.now(UTC) + timedelta(minutes=5)
        return {
            "access_key": found["AccessKeyId"],
            "secret_key": found["SecretAccessKey"],
            "token": found["SessionToken"],
            "expiry_time": expiry.isoformat(),
        }

    credentials = RefreshableCredentials.create_from_metadata(assume(), assume, "sts-assume-role")
    script = Script(keep_requests=True)
    with NoopEndpoint(script) as endpoint:
        invoker = Invoker(
            endpoint_url=endpoint.url,
            region="us-east-1",
            credentials=credentials,
            endpoint_name="my-endpoint",
            policy=policy_for("realtime"),
        )
        # When two requests are sent
        outcomes = [invoker.call(b'{"inputs": ["x"]}') for _ in range(2)]
    # Then each was signed with a role session issued just for it, and moto accepts both
    assert [o.error for o in outcomes] == [None, None]
    assert len(set(issued)) == len(issued) == 3
    signed = [re.search(r"Credential=(\w+)/", h["Authorization"])[1] for h in script.headers]  # type: ignore[index]
    assert signed == issued[1:]
    for index in range(2):
        verify_as_moto(script, index)


def test_a_client_without_credentials_is_refused_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # Given no credentials anywhere boto3 looks (environment, files, instance metadata)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # Then an invoker is refused, naming the fix
    runtime = boto3.client("sagemaker-runtime", region_name="us-east-1")
    with pytest.raises(ValueError, match="no AWS credentials .* configure credentials"):
        Invoker.from_client(runtime, "my-endpoint", policy=policy_for("realtime"))


def test_the_session_the_caller_passes_signs_rather_than_the_environment(credentials: None) -> None:
    session = boto3.session.Session(aws_access_key_id="AKIDCALLER", aws_secret_access_key="s")
    script = Script(keep_requests=True)
    with NoopEndpoint(script) as endpoint:
        runtime = session.client("sagemaker-runtime", endpoint_url=endpoint.url)
        Invoker.from_client(runtime, "my-endpoint", policy=policy_for("realtime"), session=session).call(
            b"{}"
        )
    assert "Credential=AKIDCALLER/" in script.headers[0]["Authorization"]
    assert "X-Amz-Security-Token" not in script.headers[0]  # the environment's token is not mixed in


@pytest.mark.parametrize(
    ("status", "headers", "body", "expected"),
    [
        (
            424,
            {"x-amzn-errortype": "ModelError:http://internal.amazon.com/coral/"},
            b'{"Message": "boom"}',
            ("ModelError", "boom"),
        ),
        (
            400,
            {"x-amzn-errortype": "ValidationError"},
            json.dumps({"message": NO_CAPACITY_MESSAGE}).encode(),
            (NO_CAPACITY, NO_CAPACITY_MESSAGE),
        ),
        (
            400,
            {},
            b'{"__type": "com.amazon#ThrottlingException", "message": "slow down"}',
            ("ThrottlingException", "slow down"),
        ),
        (503, {}, b"<html>gateway</html>", ("HTTP503", "<html>gateway</html>")),
    ],
)
def test_error_kinds_are_read_as_botocore_reads_them(
    status: int, headers: dict[str, str], body: bytes, expected: tuple[str, str]
) -> None:
    assert error_kind(status, headers, body) == expected


def test_every_hosting_mode_has_a_policy_and_serverless_waits_300_s() -> None:
    # Given the policy table keyed by hosting mode
    assert set(MODES) <= set(POLICIES)
    # Then serverless survives cold starts (F15) and zero-copy modes retry "no capacity" (F12)
    assert policy_for("serverless").read_timeout_s == 300
    assert NO_CAPACITY in policy_for("scale-to-zero").retry_kinds
    assert policy_for("scale-to-zero").retry_budget_s >= 471
    assert policy_for("realtime").retry_kinds == ()
    with pytest.raises(KeyError, match="known modes"):
        policy_for("batch")


def test_policy_round_trips_through_json() -> None:
    policy = policy_for("scale-to-zero")
    assert ClientPolicy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy


def test_the_client_reaches_the_url_boto3_resolves_and_sends_the_invocation_headers(
    credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = Script(keep_requests=True)
    with NoopEndpoint(script) as endpoint:
        # Given the runtime endpoint set the way the local engine sets it
        monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", endpoint.url)
        runtime = boto3.client("sagemaker-runtime")
        invoker = Invoker.from_client(
            runtime,
            "my-endpoint",
            policy=policy_for("inference-component"),
            target={"InferenceComponentName": "ic-1"},
        )
        # When it calls twice (one kept-alive connection)
        outcomes = [invoker.call(b'{"inputs": ["x"]}') for _ in range(2)]
    # Then both succeeded, signed, with the component header
    assert [o.error for o in outcomes] == [None, None]
    assert all(o.latency_ms > 0 for o in outcomes)
    headers = script.headers[0]
    assert headers["X-Amzn-SageMaker-Inference-Component"] == "ic-1"
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert script.bodies == [b'{"inputs": ["x"]}'] * 2


def test_unknown_invoke_parameters_are_refused(credentials: None) -> None:
    with pytest.raises(ValueError, match="unknown InvokeEndpoint parameters"):
        invoker_for("http://127.0.0.1:9", target={"Variant": "x"})


def test_no_capacity_is_retried_with_backoff_and_the_retries_are_counted(credentials: None) -> None:
    # Given an endpoint at zero copies for its first three requests (F12)
    policy = ClientPolicy(
        retry_kinds=(NO_CAPACITY,), retry_initial_s=0.01, retry_backoff=2.0, retry_budget_s=5.0
    )
    with NoopEndpoint(Script(fail_first=3)) as endpoint:
        # When one request is sent
        outcome = invoker_for(endpoint.url, policy).call(b"{}")
    # Then it succeeded after three counted retries, its latency covering the backoffs
    assert outcome.error is None
    assert outcome.retries == 3
    assert outcome.latency_ms >= (0.01 + 0.02 + 0.04) * 1000


def test_retries_stop_at_the_budget_and_report_the_error(credentials: None) -> None:
    policy = ClientPolicy(retry_kinds=(NO_CAPACITY,), retry_initial_s=0.05, retry_budget_s=0.12)
    with NoopEndpoint(Script(fail_first=100)) as endpoint:
        outcome = invoker_for(endpoint.url, policy).call(b"{}")
    assert outcome.error == NO_CAPACITY
    assert 1 <= outcome.retries <= 3
    assert outcome.message == NO_CAPACITY_MESSAGE


def test_realtime_does_not_retry_model_errors(credentials: None) -> None:
    script = Script(fail_first=1, fail_code="ModelError", fail_message="Worker died.", fail_status=424)
    with NoopEndpoint(script) as endpoint:
        outcome = invoker_for(endpoint.url).call(b"{}")
    assert (outcome.error, outcome.retries, outcome.message) == ("ModelError", 0, "Worker died.")


def test_a_slow_answer_past_the_read_timeout_is_a_read_timeout(credentials: None) -> None:
    # Given a policy with a short read timeout and an endpoint slower than it
    policy = ClientPolicy(read_timeout_s=0.1)
    with NoopEndpoint(Script(delay_s=0.5)) as endpoint:
        invoker = invoker_for(endpoint.url, policy)
        outcome = invoker.call(b"{}")
    # Then the call ends at the timeout as a ReadTimeout
    assert outcome.error == READ_TIMEOUT
    assert outcome.latency_ms < 450


def test_the_transport_signs_for_the_host_it_connects_to() -> None:
    from workflows.benchmark.transport import Transport

    aws = Transport(
        "https://runtime.sagemaker.us-east-1.amazonaws.com", connect_timeout_s=1, read_timeout_s=1
    )
    local = Transport("http://127.0.0.1:8080/prefix/", connect_timeout_s=1, read_timeout_s=1)
    assert (aws.host_header, aws.port, aws.path_prefix) == (
        "runtime.sagemaker.us-east-1.amazonaws.com",
        443,
        "",
    )
    assert (local.host_header, local.path_prefix) == ("127.0.0.1:8080", "/prefix")
    with pytest.raises(ValueError, match="is not http"):
        Transport("ftp://example.com", connect_timeout_s=1, read_timeout_s=1)
