"""StartBenchmarkJob: upload the engine and its config, create the benchmark processing job."""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from workflows.aws.clients import error_code, translate
from workflows.aws.storage import put_text
from workflows.benchmark.job import CONFIG_FILE, job_prefix, job_status, processing_job_request, upload_code
from workflows.benchmark.run_config import engine_config
from workflows.contracts import BenchmarkJobRequest, BenchmarkJobStatus
from workflows.hosting import pools
from workflows.settings import Settings


def start(request: BenchmarkJobRequest, *, sagemaker: Any, s3: Any, settings: Settings) -> BenchmarkJobStatus:
    """Upload code and config, create the job; a retried call finds the job it already created."""
    prefix = job_prefix(settings, request.run_id)
    upload_code(s3, prefix)
    config = {
        **engine_config(request.spec, request.deploy.endpoint_name, request.deploy.target).to_dict(),
        "region": settings.region,
        "runner": "processing-job",
    }
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
        before = pools.snapshot(sagemaker, request.deploy.endpoint_name, request.deploy.instance_pools)
        status = status.model_copy(update={"fleet_before": before})
    return status
