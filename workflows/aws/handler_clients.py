"""AWS clients and settings for the Lambda handlers, built once per execution environment (warm starts reuse them).

The handlers reach them through ``lambdas.clients``, which re-exports this module's accessors.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from workflows.aws.clients import (
    ROUTER_RUNTIME_SERVICE,
    RUNTIME_SERVICE,
    EndpointClients,
    cached_client,
    make_client,
)
from workflows.aws.encryption import encrypt_writes
from workflows.settings import Settings, kms_key_from_env

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_resourcegroupstaggingapi import ResourceGroupsTaggingAPIClient
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient
    from types_boto3_secretsmanager import SecretsManagerClient
    from types_boto3_service_quotas import ServiceQuotasClient
    from types_boto3_sns import SNSClient
    from types_boto3_stepfunctions import SFNClient


# What ``lambdas.clients`` re-exports to the handlers.
__all__ = [
    "settings",
    "sagemaker",
    "router_runtime",
    "sagemaker_in",
    "logs_in",
    "runtime_in",
    "sagemaker_runtime",
    "s3",
    "logs",
    "cloudwatch",
    "application_autoscaling",
    "tagging",
    "stepfunctions",
    "sns",
    "secretsmanager",
    "service_quotas",
    "endpoint",
    "clear",
]


@lru_cache(maxsize=1)
def settings() -> Settings:
    return Settings.from_env()


def sagemaker() -> SageMakerClient:
    return cached_client("sagemaker")  # type: ignore[no-any-return]


def router_runtime(region: str) -> Any:
    """The inference router runtime (InvokeInferenceRouter) of a run's primary Region, its router's home."""
    return cached_client(ROUTER_RUNTIME_SERVICE, region)


def sagemaker_in(region: str | None) -> SageMakerClient:
    """The SageMaker client of an endpoint's Region (``DeployResult.region``), or of another Region of a run
    across Regions (hosting.regions): the run's own when None."""
    return cached_client("sagemaker", region)  # type: ignore[no-any-return]


def logs_in(region: str | None) -> CloudWatchLogsClient:
    """CloudWatch Logs of an endpoint's Region: the run's own when None."""
    return cached_client("logs", region)  # type: ignore[no-any-return]


def runtime_in(region: str | None) -> SageMakerRuntimeClient:
    """The SageMaker runtime client of an endpoint's Region: the run's own when None."""
    return cached_client(RUNTIME_SERVICE, region)  # type: ignore[no-any-return]


def sagemaker_runtime() -> SageMakerRuntimeClient:
    return cached_client(RUNTIME_SERVICE)  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def s3() -> S3Client:
    """The S3 client; every object it writes names the stack's key (workflows/aws/encryption.py)."""
    return encrypt_writes(make_client("s3"), kms_key_from_env())


def logs() -> CloudWatchLogsClient:
    return cached_client("logs")  # type: ignore[no-any-return]


def cloudwatch() -> CloudWatchClient:
    return cached_client("cloudwatch")  # type: ignore[no-any-return]


def application_autoscaling() -> ApplicationAutoScalingClient:
    return cached_client("application-autoscaling")  # type: ignore[no-any-return]


def tagging() -> ResourceGroupsTaggingAPIClient:
    return cached_client("resourcegroupstaggingapi")  # type: ignore[no-any-return]


def stepfunctions() -> SFNClient:
    return cached_client("stepfunctions")  # type: ignore[no-any-return]


def sns() -> SNSClient:
    return cached_client("sns")  # type: ignore[no-any-return]


def secretsmanager() -> SecretsManagerClient:
    return cached_client("secretsmanager")  # type: ignore[no-any-return]


def service_quotas() -> ServiceQuotasClient:
    return cached_client("service-quotas")  # type: ignore[no-any-return]


def endpoint() -> EndpointClients:
    """Keyword arguments for a step that creates, scales, alarms or deletes a run's endpoint resources."""
    return {"sagemaker": sagemaker(), "autoscaling": application_autoscaling(), "cloudwatch": cloudwatch()}


def clear() -> None:
    """Forget cached clients and settings (the local engine calls this when it starts and stops)."""
    # Every cached factory this module holds (its own, and cached_client), so none can be forgotten here.
    for factory in [value for value in globals().values() if hasattr(value, "cache_clear")]:
        factory.cache_clear()
