"""AWS clients and settings for handlers, built once per execution environment (warm starts reuse them)."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from workflows.aws.clients import (
    ROUTER_RUNTIME_SERVICE,
    RUNTIME_SERVICE,
    EndpointClients,
    make_client,
    regional_client,
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


@lru_cache(maxsize=1)
def settings() -> Settings:
    return Settings.from_env()


@cache
def _client(service: str) -> Any:
    return make_client(service)


def sagemaker() -> SageMakerClient:
    return _client("sagemaker")  # type: ignore[no-any-return]


def router_runtime(region: str) -> Any:
    """The inference router runtime (InvokeInferenceRouter) of a run's primary Region, its router's home."""
    return regional_client(ROUTER_RUNTIME_SERVICE, region)


def _in(service: str, region: str | None) -> Any:
    return regional_client(service, region) if region else _client(service)


def sagemaker_in(region: str | None) -> SageMakerClient:
    """The SageMaker client of an endpoint's Region (``DeployResult.region``), or of another Region of a run
    across Regions (hosting.regions): the run's own when None."""
    return _in("sagemaker", region)  # type: ignore[no-any-return]


def logs_in(region: str | None) -> CloudWatchLogsClient:
    """CloudWatch Logs of an endpoint's Region: the run's own when None."""
    return _in("logs", region)  # type: ignore[no-any-return]


def runtime_in(region: str | None) -> SageMakerRuntimeClient:
    """The SageMaker runtime client of an endpoint's Region: the run's own when None."""
    return _in(RUNTIME_SERVICE, region)  # type: ignore[no-any-return]


def sagemaker_runtime() -> SageMakerRuntimeClient:
    return _client(RUNTIME_SERVICE)  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def s3() -> S3Client:
    """The S3 client; every object it writes names the stack's key (workflows/aws/encryption.py)."""
    return encrypt_writes(make_client("s3"), kms_key_from_env())


def logs() -> CloudWatchLogsClient:
    return _client("logs")  # type: ignore[no-any-return]


def cloudwatch() -> CloudWatchClient:
    return _client("cloudwatch")  # type: ignore[no-any-return]


def application_autoscaling() -> ApplicationAutoScalingClient:
    return _client("application-autoscaling")  # type: ignore[no-any-return]


def tagging() -> ResourceGroupsTaggingAPIClient:
    return _client("resourcegroupstaggingapi")  # type: ignore[no-any-return]


def stepfunctions() -> SFNClient:
    return _client("stepfunctions")  # type: ignore[no-any-return]


def sns() -> SNSClient:
    return _client("sns")  # type: ignore[no-any-return]


def secretsmanager() -> SecretsManagerClient:
    return _client("secretsmanager")  # type: ignore[no-any-return]


def service_quotas() -> ServiceQuotasClient:
    return _client("service-quotas")  # type: ignore[no-any-return]


def endpoint() -> EndpointClients:
    """Keyword arguments for a step that creates, scales, alarms or deletes a run's endpoint resources."""
    return {"sagemaker": sagemaker(), "autoscaling": application_autoscaling(), "cloudwatch": cloudwatch()}


def clear() -> None:
    """Forget cached clients and settings (the local engine calls this when it starts and stops)."""
    # Every lru_cache factory of this module, so a new client cannot be forgotten here.
    for factory in [value for value in globals().values() if hasattr(value, "cache_clear")]:
        factory.cache_clear()
