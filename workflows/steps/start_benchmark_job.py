"""StartBenchmarkJob: upload the engine and its config, create the benchmark processing job.

The job runs in the run's Region (its bucket, role and key are there) and calls the endpoint in the
endpoint's Region (``DeployResult.region``: another Region of ``hosting.regions`` after a move); a run
across Regions also measures the routed shape through its router, as the Lambda runner does.
"""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from workflows.aws.clients import error_code, translate
from workflows.aws.storage import put_text
from workflows.benchmark.job import CONFIG_FILE, job_prefix, job_status, processing_job_request, upload_code
from workflows.benchmark.routed import routed_plan
from workflows.benchmark.run_config import engine_config
from workflows.contracts import BenchmarkJobRequest, BenchmarkJobStatus
from workflows.hosting import pools
from workflows.settings import Settings


def job_config(request: BenchmarkJobRequest, settings: Settings) -> dict[str, Any]:
    """The job's config file: the engine's settings, the endpoint's Region, and the routed shape's plan."""
    router = request.router
    routed = (
        routed_plan(
            request.spec.benchmark,
            router=router.name,
            routing_target=router.routing_target,
            region=router.region,
        ).to_dict()
        if router
        else None
    )
    return {
        **engine_config(request.spec, request.deploy.endpoint_name, request.deploy.target).to_dict(),
        "region": request.deploy.region or settings.region,
        "runner": "processing-job",
        **({"routed": routed} if routed else {}),
    }


def start(
    request: BenchmarkJobRequest,
    *,
    sagemaker: Any,
    s3: Any,
    settings: Settings,
    endpoint_sagemaker: Any = None,
) -> BenchmarkJobStatus:
    """Upload code and config, create the job; a retried call finds the job it already created.

    ``endpoint_sagemaker`` is the SageMaker client of the endpoint's Region (``sagemaker``, the run's, when
    None): a pooled endpoint's instances per type are read there.
    """
    prefix = job_prefix(settings, request.run_id)
    upload_code(s3, prefix)
    config = job_config(request, settings)
    put_text(s3, f"{prefix}config/{CONFIG_FILE}", json.dumps(config, indent=2), "application/json")
    try:
        sagemaker.create_processing_job(**processing_job_request(request, settings=settings))
    except ClientError as error:
        # A retried start after a create that went through: the job exists, follow it.
        if error_code(error) not in {"ResourceInUse", "ValidationException"} or "already exists" not in str(
            error
        ):
            raise translate(error, f"create processing job {request.plan.job_name}") from error
    status = job_status(request, settings, "InProgress")
    if request.deploy.instance_pools:
        # Which pooled types hold instances as the job starts (CollectBenchmarkResults reads them after).
        before = pools.snapshot(
            endpoint_sagemaker or sagemaker, request.deploy.endpoint_name, request.deploy.instance_pools
        )
        status = status.model_copy(update={"fleet_before": before})
    return status
