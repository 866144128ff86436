"""Deploy step: the spec's hosting mode creates its resources and returns at once (the wait loop follows).

An attempt in another Region of ``hosting.regions`` (F06 past the last instance type) deploys the same
artifact there (and each further device's, with pools over CPU and GPU types): staged to that Region's
bucket, created with that Region's SageMaker client, its images chosen for that Region; the result names
the Region, and every later step reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workflows.contracts import DeployRequest, DeployResult
from workflows.hosting.base import AwsClients
from workflows.hosting.create_calls import run_tags
from workflows.hosting.modes import strategy_for
from workflows.hosting.region_staging import region_bucket, stage_in_region
from workflows.hosting.routed import Regional, attempt_region
from workflows.hosting.traces_group import keep_traces
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_logs import CloudWatchLogsClient
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
    regional: Regional | None = None,
    logs: Callable[[str | None], CloudWatchLogsClient] | None = None,
) -> DeployResult:
    """Create the hosting mode's resources (``workflows/hosting/``); returns while the endpoint is Creating.

    A traced endpoint's traces group then gets its retention (``hosting.tracing.retention_days``).

    Args:
        regional: another Region's SageMaker client, by Region name (an attempt outside the primary).
        logs: CloudWatch Logs of an endpoint's Region (None: the run's own); needed with ``hosting.tracing``.

    Raises:
        PreflightBlocked: a static check of the mode blocks (before any AWS call).
        DeployRejected: SageMaker refused a create call.
    """
    region = attempt_region(request.spec.hosting, request.attempt.region_index)
    if region is None:
        clients = AwsClients(sagemaker=sagemaker, s3=s3, autoscaling=autoscaling, cloudwatch=cloudwatch)
        result = strategy_for(request.spec.hosting.mode).deploy(request, clients=clients, settings=settings)
    else:
        result = _deploy_in(region, request, settings=settings, s3=s3, regional=regional)
    if getattr(request.spec.hosting, "tracing", None) is not None:
        if logs is None:
            raise ValueError("a traced endpoint's traces group needs CloudWatch Logs; pass logs")
        tags = {tag["Key"]: tag["Value"] for tag in run_tags(request)}
        keep_traces(logs(result.region), request.spec.hosting, endpoint=result.endpoint_name, tags=tags)
    return result


def _deploy_in(
    region: str, request: DeployRequest, *, settings: Settings, s3: S3Client | None, regional: Regional | None
) -> DeployResult:
    """The attempt in another Region: the artifacts staged to its bucket, created with its client."""
    if regional is None or s3 is None:
        raise ValueError(
            f"deploying in {region} needs that Region's SageMaker client and S3; pass regional and s3"
        )
    uri = stage_in_region(
        s3, request.pack.model_data_uri, bucket=settings.bucket, region=region, run_id=request.run_id
    )
    # Pools over CPU and GPU types: each further device's Model there reads its own device's copy.
    devices = [
        artifact.model_copy(
            update={
                "model_data_uri": stage_in_region(
                    s3,
                    artifact.model_data_uri,
                    bucket=settings.bucket,
                    region=region,
                    run_id=request.run_id,
                    device=artifact.device,
                )
            }
        )
        for artifact in request.pack.device_artifacts
    ]
    pack = request.pack.model_copy(update={"model_data_uri": uri, "device_artifacts": devices})
    there = settings.model_copy(update={"region": region, "bucket": region_bucket(settings.bucket, region)})
    clients = AwsClients(sagemaker=regional(region), s3=s3)
    result = strategy_for(request.spec.hosting.mode).deploy(
        request.model_copy(update={"pack": pack}), clients=clients, settings=there
    )
    return result.model_copy(update={"region": region})
