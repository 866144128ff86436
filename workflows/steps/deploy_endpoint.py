"""Deploy step: the spec's hosting mode creates its resources and returns at once (the wait loop follows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workflows.contracts import DeployRequest, DeployResult
from workflows.hosting.base import AwsClients
from workflows.hosting.modes import strategy_for
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient


def deploy(
    request: DeployRequest,
    *,
    sagemaker: SageMakerClient,
    settings: Settings,
    s3: S3Client | None = None,
    autoscaling: ApplicationAutoScalingClient | None = None,
    cloudwatch: CloudWatchClient | None = None,
) -> DeployResult:
    """Create the hosting mode's resources (``workflows/hosting/``); returns while the endpoint is Creating.

    Raises:
        PreflightBlocked: a static check of the mode blocks (before any AWS call).
        DeployRejected: SageMaker refused a create call.
    """
    clients = AwsClients(sagemaker=sagemaker, s3=s3, autoscaling=autoscaling, cloudwatch=cloudwatch)
    return strategy_for(request.spec.hosting.mode).deploy(request, clients=clients, settings=settings)
