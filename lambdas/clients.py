"""AWS clients and settings for handlers, built once per execution environment (warm starts reuse them)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, TypedDict

import boto3

from workflows.aws.clients import RUNTIME_CONFIG as _RUNTIME
from workflows.aws.clients import STANDARD_CONFIG as _STANDARD
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


class EndpointClients(TypedDict):
    """The clients of what a run puts on an endpoint: the SageMaker resources, their scaling, its alarms."""

    sagemaker: SageMakerClient
    autoscaling: ApplicationAutoScalingClient
    cloudwatch: CloudWatchClient


@lru_cache(maxsize=1)
def settings() -> Settings:
    return Settings.from_env()


@lru_cache(maxsize=1)
def sagemaker() -> SageMakerClient:
    return boto3.client("sagemaker", config=_STANDARD)


@lru_cache(maxsize=1)
def sagemaker_runtime() -> SageMakerRuntimeClient:
    return boto3.client("sagemaker-runtime", config=_RUNTIME)


@lru_cache(maxsize=1)
def s3() -> S3Client:
    """The S3 client; every object it writes names the stack's key (workflows/aws/encryption.py)."""
    return encrypt_writes(boto3.client("s3", config=_STANDARD), kms_key_from_env())


@lru_cache(maxsize=1)
def logs() -> CloudWatchLogsClient:
    return boto3.client("logs", config=_STANDARD)


@lru_cache(maxsize=1)
def cloudwatch() -> CloudWatchClient:
    return boto3.client("cloudwatch", config=_STANDARD)


@lru_cache(maxsize=1)
def application_autoscaling() -> ApplicationAutoScalingClient:
    return boto3.client("application-autoscaling", config=_STANDARD)


@lru_cache(maxsize=1)
def tagging() -> ResourceGroupsTaggingAPIClient:
    return boto3.client("resourcegroupstaggingapi", config=_STANDARD)


@lru_cache(maxsize=1)
def stepfunctions() -> SFNClient:
    return boto3.client("stepfunctions", config=_STANDARD)


@lru_cache(maxsize=1)
def sns() -> SNSClient:
    return boto3.client("sns", config=_STANDARD)


@lru_cache(maxsize=1)
def secretsmanager() -> SecretsManagerClient:
    return boto3.client("secretsmanager", config=_STANDARD)


@lru_cache(maxsize=1)
def service_quotas() -> ServiceQuotasClient:
    return boto3.client("service-quotas", config=_STANDARD)


def endpoint() -> EndpointClients:
    """Keyword arguments for a step that creates, scales, alarms or deletes a run's endpoint resources."""
    return {"sagemaker": sagemaker(), "autoscaling": application_autoscaling(), "cloudwatch": cloudwatch()}


def clear() -> None:
    """Forget cached clients and settings (the local engine calls this when it starts and stops)."""
    # Every lru_cache factory of this module, so a new client cannot be forgotten here.
    for factory in [value for value in globals().values() if hasattr(value, "cache_clear")]:
        factory.cache_clear()
