"""Small helpers around boto3: S3 URIs and translation of client errors to workflow errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, TypedDict

from botocore.config import Config
from botocore.exceptions import ClientError

from workflows.aws.denials import denial
from workflows.errors import (
    AwsServiceUnavailable,
    AwsThrottled,
    DeploybenchError,
    DeployRejected,
    ResourceBusy,
)

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_sagemaker import SageMakerClient

STANDARD_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5})
# Cold starts can exceed botocore's 60 s default read timeout (serverless measured 12.8 s and more, F15).
# DescribeEndpoint's Lambda timeout (state_machines.FUNCTIONS) is sized to one such call. The handlers'
# clients (lambdas/clients.py) use these two configurations.
RUNTIME_READ_TIMEOUT_S = 300
RUNTIME_CONNECT_TIMEOUT_S = 10
RUNTIME_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 1},
    read_timeout=RUNTIME_READ_TIMEOUT_S,
    connect_timeout=RUNTIME_CONNECT_TIMEOUT_S,
    max_pool_connections=64,
)

RUNTIME_SERVICE = "sagemaker-runtime"
ROUTER_RUNTIME_SERVICE = "sagemaker-inference-router-runtime"


def make_client(service: str, region: str | None = None) -> Any:
    """A boto3 client for ``service`` (in ``region``, else the environment's): the runtime's own timeouts
    for InvokeEndpoint, standard retries else."""
    import boto3

    # The typed stubs know each service by a literal name; the callers (lambdas/clients.py) type the result.
    return boto3.client(  # type: ignore[call-overload]
        service,
        region_name=region,
        config=RUNTIME_CONFIG if service in (RUNTIME_SERVICE, ROUTER_RUNTIME_SERVICE) else STANDARD_CONFIG,
    )


class EndpointClients(TypedDict):
    """The clients of what a run puts on an endpoint: the SageMaker resources, their scaling, its alarms."""

    sagemaker: SageMakerClient
    autoscaling: ApplicationAutoScalingClient
    cloudwatch: CloudWatchClient


_THROTTLED = {
    "ThrottlingException",
    "Throttling",
    "TooManyRequestsException",
    "SlowDown",
    "RequestLimitExceeded",
}
_UNAVAILABLE = {"InternalFailure", "InternalServerError", "ServiceUnavailable", "InternalError"}
_NOT_FOUND_FRAGMENTS = ("Could not find", "does not exist", "not found", "NoSuchKey", "NotFound")


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> ``(bucket, key)``."""
    if not uri.startswith("s3://") or "/" not in uri[5:]:
        raise ValueError(f"not an s3://bucket/key URI: {uri!r}")
    bucket, _, key = uri[5:].partition("/")
    return bucket, key


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def error_message(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Message", ""))


def is_not_found(error: ClientError) -> bool:
    """SageMaker says "Could not find endpoint ..." with code ValidationException."""
    code = error_code(error)
    # ObjectNotFoundException: Application Auto Scaling's (a policy or target already gone).
    if code in {
        "ResourceNotFound",
        "ResourceNotFoundException",
        "ObjectNotFoundException",
        "NoSuchEntity",
        "NoSuchKey",
        "404",
    }:
        return True
    return code == "ValidationException" and any(f in error_message(error) for f in _NOT_FOUND_FRAGMENTS)


def is_busy(error: ClientError) -> bool:
    """The resource is changing state ("Cannot update in-progress endpoint", ResourceInUse)."""
    return error_code(error) in {"ResourceInUse", "ConflictException"} or "in-progress" in error_message(
        error
    )


def translate(error: ClientError, action: str) -> DeploybenchError:
    """The workflow error a boto3 ``ClientError`` means.

    Throttling and 5xx become retryable; "in use"/"in-progress" become ``ResourceBusy``
    (retryable); a denial becomes ``AwsAccessDenied`` naming the action and the fix
    (``workflows.aws.denials``); other 4xx become ``DeployRejected`` carrying AWS's message.
    """
    code, message = error_code(error), error_message(error)
    text = f"{action}: {code}: {message}"
    if code in _THROTTLED:
        return AwsThrottled(text)
    if code in _UNAVAILABLE or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500:
        return AwsServiceUnavailable(text)
    if is_busy(error):
        return ResourceBusy(text)
    denied = denial(code, message, action)
    if denied is not None:
        return denied
    return DeployRejected(text)


@cache
def cached_client(service: str, region: str | None = None) -> Any:
    """``service``'s client in ``region`` (another Region of a run across Regions, hosting.regions), else in
    the environment's (None or empty), built once per process, service and Region: a Lambda's warm starts
    reuse it."""
    return make_client(service, region or None)


@contextlib.contextmanager
def aws_errors(action: str) -> Iterator[None]:
    """Re-raise a boto3 ``ClientError`` as the workflow error it means (see ``translate``)."""
    try:
        yield
    except ClientError as error:
        raise translate(error, action) from error


def paginate(client: Any, operation: str, key: str, **kwargs: Any) -> list[Any]:
    """All items of a paginated list call.

    ``client`` stays ``Any``: the operation is named at run time, so no one client type (nor its
    paginator's overloads) fits every caller; callers annotate what they read from the items.
    """
    items: list[Any] = []
    for page in client.get_paginator(operation).paginate(**kwargs):
        items.extend(page.get(key, []))
    return items
