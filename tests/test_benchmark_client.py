"""The benchmark client: signing, error kinds, per-mode policies, retries and timeouts."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from workflows.benchmark.client import READ_TIMEOUT, Invoker, error_kind
from workflows.benchmark.noop_endpoint import NO_CAPACITY_MESSAGE, NoopEndpoint, Script
from workflows.benchmark.policy import NO_CAPACITY, POLICIES, ClientPolicy, policy_for
from workflows.benchmark.sigv4 import SigV4Signer

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


def test_signature_is_byte_for_byte_what_botocore_computes() -> None:
    # Given botocore's own SigV4 signer on an InvokeEndpoint request
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", "session-token")
    body = json.dumps({"inputs": ["a text"], "parameters": {"batch_size": 1}}).encode()
    request = AWSRequest(
        method="POST",
        url="https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/my-endpoint/invocations",
        data=body,
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    SigV4Auth(credentials, "sagemaker", "eu-west-1").add_auth(request)
    stamp = request.headers["X-Amz-Date"]
    # When the client signs the same request at the same instant
    from calendar import timegm
    from time import strptime

    ours = SigV4Signer(credentials, region="eu-west-1").sign(
        method="POST",
        host="runtime.sagemaker.eu-west-1.amazonaws.com",
        path="/endpoints/my-endpoint/invocations",
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        now=float(timegm(strptime(stamp, "%Y%m%dT%H%M%SZ"))),
    )
    # Then the Authorization header is identical
    assert ours["Authorization"] == request.headers["Authorization"]
    assert ours["X-Amz-Security-Token"] == "session-token"


def test_a_client_without_credentials_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="no AWS credentials"):
        SigV4Signer(None, region="us-east-1")


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
